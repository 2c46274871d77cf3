"""LBFGS: limited-memory BFGS with an optional strong-Wolfe line search, torch's algorithm
(itself after minFunc), step for step.

Unlike the other optimizers, `step(closure)` evaluates the loss many times and decides, from
the values, how far to go and when to stop: its control flow depends on the data. It therefore
runs eagerly. Inside a function compiled with `autojit.compile`, the first decision on a value
(`float(loss)`) is a graph break, so that call runs eagerly as a whole (with a CompileWarning
naming the line), with eager's results; the closure's own forward and backward are eager too
then. Compile the closure's body instead if its cost dominates.

The state is torch's: kept under the first parameter, with the search direction `d`, the step
`t`, the curvature pairs `old_dirs`/`old_stps` and their `ro`, `H_diag`, the previous flat
gradient and loss, and the counters `func_evals` and `n_iter`, so that torch's state dicts load.
"""

from __future__ import annotations

from ..autograd import enable_grad, no_grad
from ..ops.complex_numbers import view_as_real
from ..ops.functional import cat
from ..tensor.creation import zeros
from ..tensor.tensor import Tensor
from .optimizer import Optimizer, check_lr

__all__ = ["LBFGS"]


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimizer of the cubic through (x1, f1, g1) and (x2, f2, g2), within bounds."""
    if bounds is not None:
        xmin_bound, xmax_bound = bounds
    else:
        xmin_bound, xmax_bound = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square >= 0:
        d2 = d2_square.sqrt()
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, xmin_bound), xmax_bound)
    return (xmin_bound + xmax_bound) / 2.0


def _strong_wolfe(obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9,
                  max_ls=25):
    """A line search along d from x for a step t meeting the strong Wolfe conditions:
    bracketing, then zooming by cubic interpolation. Returns (f, g, t, evaluations)."""
    d_norm = d.abs().max()
    g = g.clone()
    f_new, g_new = obj_func(x, t, d)
    ls_func_evals = 1
    gtd_new = g_new.dot(d)

    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.clone()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.clone()], [gtd_prev, gtd_new]
            break
        # interpolate
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        previous = t
        t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                               bounds=(min_step, max_step))
        t_prev, f_prev, g_prev, gtd_prev = previous, f_new, g_new.clone(), gtd_new
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1

    if ls_iter == max_ls:  # the most evaluations allowed: take the best bracket so far
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]

    # Zoom: refine the bracket until a point meets the conditions.
    insufficient_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break  # the bracket is too small
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0],
                               bracket[1], bracket_f[1], bracket_gtd[1])
        # A point too close to the bracket's ends makes little progress: after that happens
        # twice, or at an end, move it to 0.1 of the bracket's length away from the nearer end.
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insufficient_progress or t >= max(bracket) or t <= min(bracket):
                if abs(t - max(bracket)) < abs(t - min(bracket)):
                    t = max(bracket) - eps
                else:
                    t = min(bracket) + eps
                insufficient_progress = False
            else:
                insufficient_progress = True
        else:
            insufficient_progress = False

        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1

        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            # Armijo's condition fails, or no lower than the lowest point: a new high end.
            bracket[high_pos], bracket_f[high_pos] = t, f_new
            bracket_g[high_pos], bracket_gtd[high_pos] = g_new.clone(), gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True  # the Wolfe conditions hold
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                # the old high end becomes the new low end
                bracket[high_pos], bracket_f[high_pos] = bracket[low_pos], bracket_f[low_pos]
                bracket_g[high_pos] = bracket_g[low_pos]
                bracket_gtd[high_pos] = bracket_gtd[low_pos]
            bracket[low_pos], bracket_f[low_pos] = t, f_new
            bracket_g[low_pos], bracket_gtd[low_pos] = g_new.clone(), gtd_new

    return bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], ls_func_evals


class LBFGS(Optimizer):
    """L-BFGS (torch.optim.LBFGS): `step(closure)` runs up to max_iter iterations.

    One parameter group only. The closure clears the gradients, computes the loss, calls
    backward and returns the loss; it is called with grad enabled.

    >>> import autojit
    >>> w = autojit.tensor([3.0, -1.0], requires_grad=True)
    >>> optimizer = autojit.optim.LBFGS([w], line_search_fn="strong_wolfe")
    >>> def closure():
    ...     optimizer.zero_grad()
    ...     loss = ((w - autojit.tensor([1.0, 2.0])) ** 2).sum()
    ...     loss.backward()
    ...     return loss
    >>> _ = optimizer.step(closure)
    >>> [round(value, 4) for value in w.tolist()]
    [1.0, 2.0]
    """

    def __init__(self, params, lr=1, max_iter: int = 20, max_eval: int | None = None,
                 tolerance_grad: float = 1e-7, tolerance_change: float = 1e-9,
                 history_size: int = 100, line_search_fn: str | None = None):
        check_lr(lr)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_eval,
                        tolerance_grad=tolerance_grad, tolerance_change=tolerance_change,
                        history_size=history_size, line_search_fn=line_search_fn)
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]
        self._numel_cache = None

    def _numel(self) -> int:
        if self._numel_cache is None:
            self._numel_cache = sum(p.numel() * (2 if p.dtype.is_complex else 1)
                                    for p in self._params)
        return self._numel_cache

    def _gather_flat_grad(self) -> Tensor:
        # A complex parameter counts as the real pairs of its parts, as in torch.
        views = [zeros(p.numel(), dtype=p.dtype, device=p.device) if p.grad is None
                 else p.grad.resolve_conj().reshape(-1) for p in self._params]
        return cat([view_as_real(view).reshape(-1) if view.dtype.is_complex else view
                    for view in views], 0)

    def _add_grad(self, step_size, update: Tensor) -> None:
        offset = 0
        for p in self._params:
            if p.dtype.is_complex:
                p = view_as_real(p)
            numel = p.numel()
            p.add_(update[offset:offset + numel].reshape(p.shape) * step_size)
            offset += numel

    def _clone_param(self) -> list:
        return [p.clone() for p in self._params]

    def _set_param(self, params_data) -> None:
        for p, data in zip(self._params, params_data, strict=True):
            p.copy_(data)

    def _directional_evaluate(self, closure, x, t, d):
        self._add_grad(t, d)
        loss = float(closure())
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    def step(self, closure):
        """Up to max_iter iterations of L-BFGS; returns the loss of the closure's first call."""
        with no_grad():
            return self._step(closure)

    def _step(self, closure):
        def evaluate():
            with enable_grad():
                return closure()

        group = self.param_groups[0]
        lr = float(group["lr"])
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]

        # LBFGS's state is global; torch keeps it under the first parameter, so that
        # load_state_dict casts it like any parameter's state.
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = evaluate()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1

        flat_grad = self._gather_flat_grad()
        if flat_grad.abs().max() <= tolerance_grad:  # already optimal
            return orig_loss

        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        h_diag = state.get("H_diag")
        prev_flat_grad, prev_loss = state.get("prev_flat_grad"), state.get("prev_loss")

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1

            # The descent direction.
            if state["n_iter"] == 1:
                d = flat_grad.neg()
                old_dirs, old_stps, ro = [], [], []
                h_diag = 1
            else:
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = y.dot(s)
                if ys > 1e-10:  # a curvature pair worth keeping
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    h_diag = ys / y.dot(y)  # the scale of the initial inverse Hessian
                # The two-loop recursion: the inverse Hessian approximation times -gradient.
                num_old = len(old_dirs)
                if "al" not in state:
                    state["al"] = [None] * history_size
                al = state["al"]
                q = flat_grad.neg()
                for i in range(num_old - 1, -1, -1):
                    al[i] = old_stps[i].dot(q) * ro[i]
                    q.sub_(old_dirs[i] * al[i])
                d = r = q * h_diag
                for i in range(num_old):
                    be_i = old_dirs[i].dot(r) * ro[i]
                    r.add_(old_stps[i] * (al[i] - be_i))

            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.clone()
            else:
                prev_flat_grad.copy_(flat_grad)
            prev_loss = loss

            # The step length: the first iteration starts small, the others at lr.
            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / flat_grad.abs().sum()) * lr
            else:
                t = lr

            gtd = flat_grad.dot(d)  # the directional derivative
            if gtd > -tolerance_change:
                break

            ls_func_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = self._clone_param()

                def obj_func(x, t, d):
                    return self._directional_evaluate(evaluate, x, t, d)

                loss, flat_grad, t, ls_func_evals = _strong_wolfe(
                    obj_func, x_init, t, d, loss, flat_grad, gtd,
                    max_ls=max_eval - current_evals)
                self._add_grad(t, d)
                opt_cond = flat_grad.abs().max() <= tolerance_grad
            else:
                # A fixed step; the loss is evaluated again unless this is the last iteration
                # (in a stochastic setting there is no use in it).
                self._add_grad(t, d)
                if n_iter != max_iter:
                    loss = float(evaluate())
                    flat_grad = self._gather_flat_grad()
                    opt_cond = flat_grad.abs().max() <= tolerance_grad
                    ls_func_evals = 1

            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            if n_iter == max_iter or current_evals >= max_eval:
                break
            if opt_cond:
                break
            if (d * t).abs().max() <= tolerance_change:  # no progress in the parameters
                break
            if abs(loss - prev_loss) < tolerance_change:  # nor in the loss
                break

        state["d"], state["t"] = d, t
        state["old_dirs"], state["old_stps"], state["ro"] = old_dirs, old_stps, ro
        state["H_diag"] = h_diag
        state["prev_flat_grad"], state["prev_loss"] = prev_flat_grad, prev_loss
        return orig_loss
