"""PyTorch tensors in and out: read in place on the CPU (no copy), of
every float dtype torch has, with the results those of the same data as
NumPy arrays, and as torch tensors of the matching dtype.  Skipped without
torch."""

import numpy as np
import pytest

import fpkit

torch = pytest.importorskip("torch")


def test_tensors_are_read_in_place():
    t = torch.randn(1000) * 100
    view = fpkit._dtypes.array_in(t).array
    assert np.shares_memory(view, t.numpy())
    # a tensor that requires grad is read too (detached)
    w = torch.randn(10, 10, requires_grad=True)
    assert np.array_equal(fpkit.quantize(w, "e4m3").numpy(),
                          fpkit.quantize(w.detach().numpy(), "e4m3"))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "float8_e4m3fn",
                                   "float8_e5m2"])
def test_dtypes(dtype):
    if not hasattr(torch, dtype):
        pytest.skip(f"torch {torch.__version__} has no {dtype}")
    t = (torch.randn(64, 33) * 10).to(getattr(torch, dtype))
    y = fpkit.quantize(t, "e5m2")
    assert isinstance(y, torch.Tensor) and y.shape == t.shape
    # the same as the tensor's values as float32 NumPy
    ref = fpkit.quantize(t.to(torch.float32).numpy(), "e5m2")
    assert np.array_equal(y.to(torch.float32).numpy(), ref)
    e = fpkit.encode(t, "e4m3")
    assert isinstance(e, torch.Tensor)
    if hasattr(torch, "float8_e4m3fn"):
        assert e.dtype == torch.float8_e4m3fn
    assert np.array_equal(fpkit.decode(e).numpy() if e.dtype != torch.uint8 else
                          fpkit.decode(e.numpy(), "e4m3"),
                          fpkit.quantize(t.to(torch.float32).numpy(), "e4m3"))
    s = fpkit.stats(t)
    assert s.count == t.numel()
    # (the counts of the same values as float64; the SQNR's sums, lanes for
    # float32 and exact ones for float64, may differ in their last bits)
    assert {n: (f.underflow, f.subnormal, f.overflow) for n, f in s.fmt.items()} == {
        n: (f.underflow, f.subnormal, f.overflow)
        for n, f in fpkit.stats(t.to(torch.float64).numpy()).fmt.items()}


def test_bf16_results_stay_bf16():
    t = torch.randn(100).bfloat16()
    y = fpkit.quantize(t, "e4m3")  # e4m3's values are bfloat16 values
    assert y.dtype == torch.bfloat16
    assert fpkit.quantize(t, "fp16").dtype == torch.float32  # fp16's are not


def test_gpu_tensors_are_refused():
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    with pytest.raises(TypeError, match="on the CPU"):
        fpkit.quantize(torch.ones(3, device="cuda"), "fp16")


def test_dlpack():
    t = torch.randn(50)
    y = fpkit.quantize(t, "bf16")

    class Producer:  # any object with __dlpack__
        def __init__(self, t):
            self.t = t

        def __dlpack__(self, stream=None):
            return self.t.__dlpack__()

        def __dlpack_device__(self):
            return self.t.__dlpack_device__()

    z = fpkit.quantize(Producer(t), "bf16")
    assert isinstance(z, np.ndarray) and np.array_equal(z, y.numpy())
