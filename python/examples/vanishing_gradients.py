"""Which of a model's gradients vanish in FP16 and FP8?

One forward and backward pass of a small convolutional network (no
training), then fpkit's statistics of every gradient: the share of its
nonzero elements that round to zero in fp16, bf16, e4m3 and e5m2, with
no loss scaling and with a loss scale of 1024, and the SQNR.  Run it as a
script (it needs torch); each step is a notebook cell.

    python3 python/examples/vanishing_gradients.py
"""

import torch

import fpkit

# A network like the one of fpkit's sample dump, on random 8x8 "images".
torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Conv2d(1, 4, 3, padding=1), torch.nn.ReLU(),
    torch.nn.Conv2d(4, 8, 3, padding=1), torch.nn.ReLU(),
    torch.nn.MaxPool2d(2), torch.nn.Flatten(),
    torch.nn.Linear(128, 32), torch.nn.ReLU(),
    torch.nn.Linear(32, 10),
)
x = torch.rand(256, 1, 8, 8)
y = torch.randint(0, 10, (256,))

# One backward pass: the loss is a mean over the batch, so the gradients
# are small, and smaller still deep in the network.
loss = torch.nn.functional.cross_entropy(model(x), y)
loss.backward()

# The statistics of each gradient, read in place from the tensor.
FORMATS = ("fp16", "bf16", "e4m3", "e5m2")
rows = []
for name, p in model.named_parameters():
    s = fpkit.stats(p.grad, FORMATS, name=name)
    scaled = fpkit.stats(p.grad, FORMATS, scale=1024, sqnr=False)
    rows.append((name, s, scaled))

print(f"{'gradient':<12} {'elements':>8} {'amax':>10}   share of nonzero elements that vanish")
print(f"{'':<12} {'':>8} {'':>10}   {'fp16':>6} {'bf16':>6} {'e4m3':>6} {'e5m2':>6}"
      f"   fp16 x1024  e4m3 SQNR")
for name, s, scaled in rows:
    share = [s.fmt[f].underflow_frac or 0 for f in FORMATS]
    sq = s.fmt["e4m3"].sqnr_db
    print(f"{name:<12} {s.count:>8} {s.amax:>10.3g}   " + " ".join(f"{v:>6.1%}" for v in share)
          + f"   {scaled.fmt['fp16'].underflow / max(s.nonzero_finite, 1):>10.1%}"
          + f"  {'-' if sq is None else f'{sq:.1f} dB':>9}")

# The statistics agree with fake quantisation of the same tensors: an
# element vanishes when it is nonzero and its rounded value is zero.
for name, s, _ in rows:
    g = dict(model.named_parameters())[name].grad
    for f in FORMATS:
        q = fpkit.quantize(g, f)
        lost = int(((g != 0) & (q == 0)).sum())
        assert lost == s.fmt[f].underflow, (name, f, lost, s.fmt[f].underflow)

total = sum(s for _, s, _ in rows)
for f, label in (("fp16", "fp16"), ("e4m3", "fp8 (e4m3)"), ("e5m2", "fp8 (e5m2)")):
    lost = [name for name, s, _ in rows if s.fmt[f].underflow]
    print(f"vanish in {label}: {', '.join(lost) or 'none'} "
          f"({total.fmt[f].underflow_frac:.2%} of all nonzero gradient elements)")
print(f"a loss scale of 1024 keeps in fp16 all but "
      f"{sum(sc.fmt['fp16'].underflow for _, _, sc in rows)} of {total.nonzero_finite}")
