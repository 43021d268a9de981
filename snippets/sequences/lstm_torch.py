"""gpukb's numpy LSTM and RNN against torch autograd with the same weights, and the worked example in torch."""

# ruff: noqa: E402  (each section is shown on the page on its own, so it imports what it uses)

# --8<-- [start:gradients]
import numpy as np
import torch

from gpukb.sequences.lstm import LSTMParams, lstm_backward, lstm_forward

torch.manual_seed(0)
steps, batch, n_in, hidden = 6, 3, 4, 5
lstm = torch.nn.LSTM(n_in, hidden).double()  # gates stacked i, f, g, o; two biases
x = torch.randn(steps, batch, n_in, dtype=torch.float64, requires_grad=True)
h0, c0 = (torch.randn(1, batch, hidden, dtype=torch.float64, requires_grad=True) for _ in range(2))
out, (h_n, c_n) = lstm(x, (h0, c0))
g_out, g_h, g_c = torch.randn_like(out), torch.randn_like(h_n), torch.randn_like(c_n)
((out * g_out).sum() + (h_n * g_h).sum() + (c_n * g_c).sum()).backward()  # any scalar loss

names = ("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0")
params = LSTMParams(*(getattr(lstm, n).detach().numpy() for n in names))
trace = lstm_forward(params, x.detach().numpy(), h0[0].detach().numpy(), c0[0].detach().numpy())
grads = lstm_backward(params, trace, g_out.numpy(), g_h[0].numpy(), g_c[0].numpy())

pairs = {
    "output": (trace.outputs, out.detach()),
    "d weight_ih": (grads.weight_ih, lstm.weight_ih_l0.grad),
    "d weight_hh": (grads.weight_hh, lstm.weight_hh_l0.grad),
    "d bias_ih": (grads.bias_ih, lstm.bias_ih_l0.grad),
    "d bias_hh": (grads.bias_hh, lstm.bias_hh_l0.grad),
    "d x": (grads.x, x.grad),
    "d h0": (grads.h0, h0.grad[0]),
    "d c0": (grads.c0, c0.grad[0]),
}
for name, (ours, theirs) in pairs.items():
    print(f"{name:<12} max |numpy - torch| = {np.abs(ours - theirs.numpy()).max():.1e}")
gap = (lstm.bias_ih_l0.grad - lstm.bias_hh_l0.grad).abs().max().item()
print(f"torch's two bias gradients differ by at most {gap:.1e}")
# --8<-- [end:gradients]

# --8<-- [start:worked-example]
import torch

# The worked example's weights in torch's layout: rows i, f, g, o; the one bias in bias_ih.
cell = torch.nn.LSTM(input_size=2, hidden_size=1).double()
with torch.no_grad():
    cell.weight_ih_l0.copy_(torch.tensor([[0.95, 0.8], [0.7, 0.45], [0.45, 0.25], [0.6, 0.4]]))
    cell.weight_hh_l0.copy_(torch.tensor([[0.8], [0.1], [0.15], [0.25]]))
    cell.bias_ih_l0.copy_(torch.tensor([0.65, 0.15, 0.2, 0.1]))
    cell.bias_hh_l0.zero_()
cell.bias_hh_l0.requires_grad_(False)  # one bias, as in the example: a second one would move the sum twice as far

x = torch.tensor([[1.0, 2.0], [0.5, 3.0]], dtype=torch.float64)  # (T, I): one sequence, two steps
y = torch.tensor([0.5, 1.25], dtype=torch.float64)
out, _ = cell(x)
loss = 0.5 * ((out[:, 0] - y) ** 2).sum()
loss.backward()
print("out:", [round(v, 5) for v in out[:, 0].tolist()])
with torch.no_grad():  # one plain SGD step, p <- p - 0.1 * dL/dp (what torch.optim.SGD(lr=0.1) does)
    for p in cell.parameters():
        if p.requires_grad:
            p -= 0.1 * p.grad
print("updated weight_ih (rows i, f, g, o):", [[round(v, 5) for v in row] for row in cell.weight_ih_l0.tolist()])
print("updated weight_hh:", [round(v, 5) for v in cell.weight_hh_l0[:, 0].tolist()])
print("updated bias_ih:  ", [round(v, 5) for v in cell.bias_ih_l0.tolist()])
# --8<-- [end:worked-example]
