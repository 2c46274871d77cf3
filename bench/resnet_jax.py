"""The ResNet-8 step of bench/resnet_step.py written in jax, for its jax.jit column.

The same network as `resnet_step.build` (a 3x3 stem, three basic blocks of 16, 32 and 64
channels, the last two strided with a 1x1 projection shortcut, BatchNorm after every
convolution, global average pooling and a linear head), the same mean cross-entropy and
torch's SGD update with momentum and weight decay, started from torch's state_dict as NumPy
arrays, so that the losses of the first steps agree with torch's. BatchNorm normalizes by the
batch's biased variance and moves the running statistics as torch does (unbiased variance).
One `jax.jit` function takes the parameters, the buffers, the momentum and the batch and
returns the new ones (donated, so that XLA updates them in place) and the loss.
"""

from __future__ import annotations

LR, MOMENTUM, WEIGHT_DECAY, BN_MOMENTUM, EPS = 0.1, 0.9, 5e-4, 0.1, 1e-5


def make_jax_step(state: dict):
    """A step function `(x, y) -> loss` (jax arrays) training a model that starts from
    `state` (torch's state_dict names, NumPy arrays)."""
    import jax
    import jax.numpy as jnp

    buffer_names = {name for name in state
                    if name.endswith(("running_mean", "running_var", "num_batches_tracked"))}
    parameters = {name: jnp.asarray(value) for name, value in state.items()
                  if name not in buffer_names}
    buffers = {name: jnp.asarray(value) for name, value in state.items()
               if name in buffer_names and not name.endswith("num_batches_tracked")}
    velocity = {name: jnp.zeros_like(value) for name, value in parameters.items()}

    def conv(x, weight, stride):
        padding = (weight.shape[2] - 1) // 2
        return jax.lax.conv_general_dilated(x, weight, (stride, stride),
                                            [(padding, padding)] * 2,
                                            dimension_numbers=("NCHW", "OIHW", "NCHW"))

    def batch_norm(x, p, b, prefix, updates):
        mean = x.mean((0, 2, 3))
        variance = ((x - mean[None, :, None, None]) ** 2).mean((0, 2, 3))
        count = x.size // x.shape[1]
        updates[prefix + "running_mean"] = (
            (1 - BN_MOMENTUM) * b[prefix + "running_mean"] + BN_MOMENTUM * mean)
        updates[prefix + "running_var"] = (
            (1 - BN_MOMENTUM) * b[prefix + "running_var"]
            + BN_MOMENTUM * variance * count / (count - 1))
        scale = p[prefix + "weight"] / jnp.sqrt(variance + EPS)
        return ((x - mean[None, :, None, None]) * scale[None, :, None, None]
                + p[prefix + "bias"][None, :, None, None])

    def block(x, p, b, prefix, stride, updates):
        h = jax.nn.relu(batch_norm(conv(x, p[prefix + "conv1.weight"], stride), p, b,
                                   prefix + "bn1.", updates))
        h = batch_norm(conv(h, p[prefix + "conv2.weight"], 1), p, b, prefix + "bn2.", updates)
        if prefix + "shortcut.0.weight" in p:
            x = batch_norm(conv(x, p[prefix + "shortcut.0.weight"], stride), p, b,
                           prefix + "shortcut.1.", updates)
        return jax.nn.relu(h + x)

    def forward(p, b, x):
        updates: dict = {}
        h = jax.nn.relu(batch_norm(conv(x, p["conv.weight"], 1), p, b, "bn.", updates))
        for index, stride in enumerate((1, 2, 2)):
            h = block(h, p, b, f"layers.{index}.", stride, updates)
        logits = h.mean((2, 3)) @ p["fc.weight"].T + p["fc.bias"]
        return logits, updates

    def loss_fn(p, b, x, y):
        logits, updates = forward(p, b, x)
        log_probabilities = jax.nn.log_softmax(logits)
        loss = -jnp.take_along_axis(log_probabilities, y[:, None], axis=1).mean()
        return loss, updates

    def step(p, b, v, x, y):
        (loss, updates), grads = jax.value_and_grad(loss_fn, has_aux=True)(p, b, x, y)
        new_p, new_v = {}, {}
        for name, value in p.items():
            g = grads[name] + WEIGHT_DECAY * value
            new_v[name] = MOMENTUM * v[name] + g
            new_p[name] = value - LR * new_v[name]
        return new_p, updates, new_v, loss

    # torch's first momentum step sets the buffer to the gradient: momentum times zeros plus
    # the gradient, so velocities starting at zero give the same update.
    compiled = jax.jit(step, donate_argnums=(0, 1, 2))
    carried = [parameters, buffers, velocity]

    def run(x, y):
        carried[0], carried[1], carried[2], loss = compiled(*carried, x, y)
        return float(loss)

    return run
