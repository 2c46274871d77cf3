"""The transformer step of bench/transformer_step.py written in jax, for its jax.jit column.

The same model as `transformer_step.build` (pre-norm nn.TransformerEncoderLayer blocks under a
causal mask, token and position embeddings, a LayerNorm and Linear head), the same mean
cross-entropy and torch's AdamW update (lr 1e-3, betas (0.9, 0.999), eps 1e-8, weight decay
0.01), started from torch's state_dict as NumPy arrays, so that the losses of the first steps
agree with torch's. One `jax.jit` function takes the parameters, the optimizer state and the
batch and returns the new ones (donated, so that XLA updates them in place) and the loss.
"""

from __future__ import annotations

import numpy as np

LR, BETA1, BETA2, EPSILON, WEIGHT_DECAY = 1e-3, 0.9, 0.999, 1e-8, 0.01


def make_jax_step(state: dict, heads: int, layers: int):
    """A step function `(ids, targets) -> loss` (jax arrays) training a model that starts
    from `state` (torch's state_dict names, NumPy arrays)."""
    import jax
    import jax.numpy as jnp

    buffers = {"mask", "position_ids"}
    parameters = {name: jnp.asarray(value) for name, value in state.items()
                  if name not in buffers}
    mask = jnp.asarray(state["mask"])
    position_ids = jnp.asarray(state["position_ids"])

    def layer_norm(x, weight, bias):
        mean = x.mean(-1, keepdims=True)
        variance = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / jnp.sqrt(variance + 1e-5) * weight + bias

    def attention(x, p, prefix):
        batch, length, width = x.shape
        qkv = x @ p[prefix + "in_proj_weight"].T + p[prefix + "in_proj_bias"]
        q, k, v = jnp.split(qkv, 3, axis=-1)

        def split_heads(t):
            return t.reshape(batch, length, heads, width // heads).transpose(0, 2, 1, 3)

        q, k, v = split_heads(q), split_heads(k), split_heads(v)
        scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(width // heads) + mask
        weights = jax.nn.softmax(scores, axis=-1)
        out = (weights @ v).transpose(0, 2, 1, 3).reshape(batch, length, width)
        return out @ p[prefix + "out_proj.weight"].T + p[prefix + "out_proj.bias"]

    def forward(p, ids):
        x = p["tokens.weight"][ids] + p["positions.weight"][position_ids]
        for layer in range(layers):
            prefix = f"blocks.layers.{layer}."
            x = x + attention(layer_norm(x, p[prefix + "norm1.weight"], p[prefix + "norm1.bias"]),
                              p, prefix + "self_attn.")
            h = layer_norm(x, p[prefix + "norm2.weight"], p[prefix + "norm2.bias"])
            h = jax.nn.relu(h @ p[prefix + "linear1.weight"].T + p[prefix + "linear1.bias"])
            x = x + h @ p[prefix + "linear2.weight"].T + p[prefix + "linear2.bias"]
        x = layer_norm(x, p["norm.weight"], p["norm.bias"])
        return x @ p["head.weight"].T + p["head.bias"]

    def loss_of(p, ids, targets):
        logits = forward(p, ids)
        log_probabilities = jax.nn.log_softmax(logits, axis=-1)
        picked = jnp.take_along_axis(log_probabilities, targets[..., None], axis=-1)
        return -picked.mean()

    def step(p, first, second, count, ids, targets):
        loss, grads = jax.value_and_grad(loss_of)(p, ids, targets)
        count = count + 1
        correction1, correction2 = 1 - BETA1 ** count, 1 - BETA2 ** count
        new_p, new_first, new_second = {}, {}, {}
        for name, value in p.items():
            grad = grads[name]
            value = value * (1 - LR * WEIGHT_DECAY)
            m = BETA1 * first[name] + (1 - BETA1) * grad
            v = BETA2 * second[name] + (1 - BETA2) * grad * grad
            denominator = jnp.sqrt(v) / jnp.sqrt(correction2) + EPSILON
            new_p[name] = value - (LR / correction1) * m / denominator
            new_first[name], new_second[name] = m, v
        return new_p, new_first, new_second, count, loss

    jitted = jax.jit(step, donate_argnums=(0, 1, 2))
    def zeros():  # a buffer each: a donated buffer may appear once among the arguments
        return {name: jnp.zeros_like(value) for name, value in parameters.items()}

    carried = [parameters, zeros(), zeros(), jnp.zeros((), jnp.float32)]

    def run(ids, targets):
        *carried[:], loss = jitted(*carried, ids, targets)  # the donated state, replaced
        return float(loss)

    return run
