"""A training step shared by the st.jit tests: zero_grad, forward, MSE loss, backward, step."""

import sharded as st


def mse_step(model, opt):
    """``step(x, y)``: one training step of ``model`` with ``opt``; returns the loss."""

    def step(x, y):
        opt.zero_grad()
        loss = st.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        return loss

    return step
