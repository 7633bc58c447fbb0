#!/usr/bin/env python3
"""Record a PyTorch training run's gradients for fpkit (fpkit-dumps(5)).

Every recorded step becomes one safetensors file, step-NNNNNN.safetensors,
that fpgrad(1) reads directly; under torch.distributed each rank writes its
own, step-NNNNNN-rankRRRR-of-WWWW.safetensors, which fpgrad --shards reads as
one dump.  A file holds, for each parameter P (by its name in
model.named_parameters()) and each leaf module L (by its name in
model.named_modules()):

    grad/P      the gradient held in P.grad when before_step() is called
    weight/P    the parameter before the optimizer step
    update/P    the update the optimizer applied: weight after - weight before
    actgrad/L   the gradient with respect to L's output, as the backward pass
                computed it (from a full backward (pre-)hook on L)

and in __metadata__ (strings, as safetensors requires): step, loss,
loss_scale, fpkit_dump (the layout's version) and torch (its version);
rank and world_size in a rank's file; grads_scaled with a GradScaler.

Only the standard library and torch are needed: the files are written here,
not by the safetensors package.  Each file is written to a temporary name in
the output directory, put on the disk and renamed into place, so a reader
never sees half a file, after a crash too.  Use:

    dumper = FpkitDumper(model, "dumps", every=100)
    for step, (x, y) in enumerate(loader):
        loss = loss_fn(model(x), y)
        loss.backward()
        dumper.before_step(step, loss)      # after backward, before the step
        optimizer.step()
        dumper.after_step()                 # computes the updates, writes
        optimizer.zero_grad()
    dumper.close()

With a torch.amp.GradScaler, FpkitDumper(..., scaler=scaler) takes the
loss scale from scaler.get_scale(); call before_step() after
scaler.scale(loss).backward() and before scaler.step(optimizer), and the
gradients are recorded as backward left them, times that scale.

Under torch.distributed (initialized, more than one process), or given
rank= and world_size=, each rank writes its own file.  The parameters are
taken to be alike on every rank, as DistributedDataParallel keeps them, so
rank 0 alone records grad/, weight/ and update/; every rank records the
activation gradients of its part of the batch.  With replicated=False
(FSDP, tensor parallelism) every rank records its own parameters too.

Activation gradients arrive during backward, before before_step() is told
the step number, so the dumper must know beforehand whether a step is
recorded: it assumes each step is the one after the last before_step() (the
first is first_step), or call begin_step(step) before the forward pass when
steps are not numbered that way.

Device statistics: with stats=... the dumper writes no tensors.  Each
recorded tensor is analysed where it lives, on its CUDA device, by
libfpkit_cuda's fpk_cuda_stats (fpkit_cuda.h, through ctypes: the same
counts as fpgrad computes from a dump), and each recorded step becomes one
file, step-NNNNNN.jsonl: a line per tensor, in the order above, each a JSON
object of fpk_stats_to_json's form (libfpkit(3): count, zeros, nonfinite,
amax, log2_hist, formats), which fpk_stats_from_json reads and
fpk_stats_merge adds up, with the keys tensor, step, loss and loss_scale
besides (readers ignore keys they do not know).  Use:

    dumper = FpkitDumper(model, "stats", every=100,
                         stats={"formats": "fp16,bf16,e4m3,e5m2"})

or device_stats(tensor) for one tensor's statistics as a dict.  The library
is found as $FPKIT_CUDA_LIB, else by ctypes.util.find_library("fpkit_cuda"),
or given as stats={"lib": PATH}.

Run "python3 fpkit_dump.py --demo OUTDIR" to train a tiny model for a few
steps and dump them (with --cuda, trained on the GPU; with --device-stats,
on the GPU, as statistics).
"""

import argparse
import ctypes
import ctypes.util
import errno
import json
import math
import os
import sys
import warnings

import torch

__all__ = ["FpkitDumper", "write_safetensors", "step_file_name", "device_stats",
           "load_cuda_library", "LAYOUT_VERSION"]

LAYOUT_VERSION = "1"
"""The value of __metadata__["fpkit_dump"]: the version of this layout."""

# torch dtype -> (safetensors dtype name, fpk_dtype_lookup's name for the
# device statistics).  The 8-bit formats exist in newer torch releases only.
_DTYPES = {
    torch.float64: ("F64", "f64"),
    torch.float32: ("F32", "f32"),
    torch.float16: ("F16", "f16"),
    torch.bfloat16: ("BF16", "bf16"),
}
for _attr, _names in (("float8_e4m3fn", ("F8_E4M3", "e4m3")),
                      ("float8_e5m2", ("F8_E5M2", "e5m2"))):
    if hasattr(torch, _attr):
        _DTYPES[getattr(torch, _attr)] = _names
_ST_DTYPES = {t: names[0] for t, names in _DTYPES.items()}
_FPK_DTYPES = {t: names[1] for t, names in _DTYPES.items()}


def _little_endian_bytes(t):
    """A buffer of T's elements in C order, little-endian, that keeps T alive.

    T must be a contiguous CPU tensor.  The buffer is a view of T's memory
    (through ctypes, so numpy is not needed) unless the host is big-endian,
    where the bytes of each element are reversed in a copy first.
    """
    nbytes = t.numel() * t.element_size()
    if nbytes == 0:
        return b""
    if sys.byteorder == "big" and t.element_size() > 1:
        t = t.reshape(-1).view(torch.uint8).view(-1, t.element_size()).flip(1).contiguous()
    buf = (ctypes.c_char * nbytes).from_address(t.data_ptr())
    buf._fpkit_owner = t  # the memory belongs to T: keep it alive with BUF
    return buf


def write_safetensors(path, tensors, metadata=None):
    """Write TENSORS, a list of (name, tensor) pairs, to the file PATH.

    The layout is safetensors': an 8-byte little-endian header length N, N
    bytes of JSON, then every tensor's raw little-endian bytes in C order.
    The JSON object maps each name to {"dtype", "shape", "data_offsets":
    [begin, end]} (offsets from the end of the header) and "__metadata__"
    to METADATA, a dict of strings.  The data are packed with no gaps, the
    header lists them in order of offset, and tensors are laid out widest
    dtype first, so that each starts at a multiple of its element size (the
    header is padded with spaces to a multiple of 8 bytes).  Names must be
    unique and not "__metadata__"; dtypes must be floating point ones
    safetensors names (F64 F32 F16 BF16, and F8_E4M3 F8_E5M2 where torch
    has them).  PATH is written through a temporary file in its directory
    that is put on the disk and renamed into place, so it appears complete
    or not at all, after a crash too.
    """
    metadata = dict(metadata or {})
    for k, v in metadata.items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise TypeError("safetensors metadata maps strings to strings: %r: %r" % (k, v))
    prepared = []
    seen = set()
    for order, (name, t) in enumerate(tensors):
        if name == "__metadata__" or name in seen:
            raise ValueError("tensor name %r is reserved or used twice" % name)
        seen.add(name)
        if t.dtype not in _ST_DTYPES:
            raise TypeError("tensor %r has dtype %s, which fpkit dumps do not hold"
                            % (name, t.dtype))
        t = t.detach().to("cpu").contiguous()
        prepared.append((-t.element_size(), order, name, t))
    prepared.sort(key=lambda e: e[:2])

    header = {}
    if metadata:
        header["__metadata__"] = metadata
    offset = 0
    for _, _, name, t in prepared:
        nbytes = t.numel() * t.element_size()
        header[name] = {
            "dtype": _ST_DTYPES[t.dtype],
            "shape": list(t.shape),
            "data_offsets": [offset, offset + nbytes],
        }
        offset += nbytes
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)

    def write(f):
        f.write(len(text).to_bytes(8, "little"))
        f.write(text)
        for _, _, _, t in prepared:
            f.write(_little_endian_bytes(t))
    _replace_file(path, write)


def _number_text(x):
    """X (a number or a one-element tensor) as the shortest decimal that
    reads back as the same double: "65536", "0.5", "2.3025851249694824",
    "nan", "inf"."""
    x = float(x)
    if math.isfinite(x) and x == int(x) and abs(x) < 2.0 ** 53:
        return str(int(x))
    return repr(x)


class _FpkError(ctypes.Structure):
    """fpk_error (libfpkit(3)): a code and a message."""
    _fields_ = [("code", ctypes.c_int), ("msg", ctypes.c_char * 256)]


def load_cuda_library(path=None):
    """libfpkit_cuda through ctypes: PATH, else $FPKIT_CUDA_LIB, else the
    library the system finds as "fpkit_cuda".  Raises OSError if none."""
    path = path or os.environ.get("FPKIT_CUDA_LIB") or ctypes.util.find_library("fpkit_cuda")
    if not path:
        raise OSError("libfpkit_cuda not found: build fpkit with --with-cuda, install it, "
                      "or set FPKIT_CUDA_LIB to the library's path")
    lib = ctypes.CDLL(path)
    lib.fpk_cuda_stats_json.restype = ctypes.c_void_p
    lib.fpk_cuda_stats_json.argtypes = [
        ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_double,
        ctypes.c_char_p, ctypes.c_bool, ctypes.c_bool, ctypes.c_void_p, ctypes.POINTER(_FpkError)]
    lib.fpk_cuda_free.restype = None
    lib.fpk_cuda_free.argtypes = [ctypes.c_void_p]
    return lib


def device_stats(t, formats="fp16,bf16,e4m3,e5m2", scale=1.0, round="rne", ftz=False,
                 saturate=False, lib=None):
    """The statistics of tensor T, on a CUDA device, as fpgrad computes them
    from a dump: a dict of fpk_stats_to_json's form.  FORMATS is a
    comma-separated list of format names; each element x is rounded as
    x * SCALE in mode ROUND (rne, rna, rtz, rup, rdn, rod, sr) with FTZ and
    SATURATE.  Runs on the current stream of T's device and returns when
    done.  LIB is a library from load_cuda_library(), or its path."""
    if not isinstance(lib, ctypes.CDLL):
        lib = load_cuda_library(lib)
    t = t.detach()
    if t.dtype not in _FPK_DTYPES:
        raise TypeError("device statistics take floating-point tensors fpkit reads, not %s"
                        % t.dtype)
    if not t.is_cuda:
        raise ValueError("device statistics need a tensor on a CUDA device, not on %s" % t.device)
    t = t.contiguous()
    stream = torch.cuda.current_stream(t.device).cuda_stream
    err = _FpkError()
    text = lib.fpk_cuda_stats_json(t.data_ptr() if t.numel() else None, t.numel(),
                                   _FPK_DTYPES[t.dtype].encode(), formats.encode(), float(scale),
                                   round.encode(), bool(ftz), bool(saturate), stream,
                                   ctypes.byref(err))
    if not text:
        raise RuntimeError(err.msg.decode("utf-8", "replace"))
    try:
        return json.loads(ctypes.string_at(text).decode("utf-8"))
    finally:
        lib.fpk_cuda_free(text)


def _replace_file(path, write):
    """Calls WRITE(f) on a new temporary file in PATH's directory, puts the
    file on the disk (fsync) and renames it into place, then syncs the
    directory: PATH appears complete or not at all, after a crash of the
    machine too (a rename without the fsync before it can leave an empty
    file under PATH after a crash)."""
    directory, base = os.path.split(os.path.abspath(path))
    tmp = os.path.join(directory, ".%s.%d.%s.tmp" % (base, os.getpid(), os.urandom(4).hex()))
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    try:
        dfd = os.open(directory, os.O_RDONLY)
    except OSError:
        return  # a system that cannot open a directory (Windows): the rename stands
    try:
        os.fsync(dfd)
    except OSError as e:
        # a file system that cannot sync a directory: the rename stands
        if e.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EBADF):
            raise
    finally:
        os.close(dfd)


def _rank_and_world(rank, world_size):
    """(rank, world size) of this process: RANK and WORLD_SIZE when given
    (both or neither), else those of torch.distributed's default group
    where it is initialized, else (0, 1)."""
    if rank is None and world_size is None:
        dist = torch.distributed
        if dist.is_available() and dist.is_initialized():
            return dist.get_rank(), dist.get_world_size()
        return 0, 1
    if rank is None or world_size is None:
        raise ValueError("give rank and world_size together, not rank=%r world_size=%r"
                         % (rank, world_size))
    if (not all(isinstance(v, int) and not isinstance(v, bool) for v in (rank, world_size))
            or not 0 <= rank < world_size):
        raise ValueError("rank must be an integer from 0 to world_size - 1, not rank=%r "
                         "world_size=%r" % (rank, world_size))
    return rank, world_size


def step_file_name(step, rank=0, world_size=1, ext="safetensors"):
    """The name of the file of step STEP: step-000100.safetensors, or with
    more than one rank step-000100-rank0003-of-0008.safetensors, whose
    index before -of- fpgrad --shards groups by (fpgrad(1)).  The numbers
    take four digits at least, more when WORLD_SIZE needs them."""
    if world_size == 1:
        return "step-%06d.%s" % (step, ext)
    width = max(4, len(str(world_size)))
    return "step-%06d-rank%0*d-of-%0*d.%s" % (step, width, rank, width, world_size, ext)


def _grads_scaled(scaler):
    """Whether the gradients still carry SCALER's scale: it is enabled and
    has not unscaled them (by unscale_() or step()) since its last
    update().  GradScaler's per-optimizer stage is the only record of an
    unscale_(); a scaler without one is taken to have left them scaled."""
    if not scaler.is_enabled():
        return False
    states = getattr(scaler, "_per_optimizer_states", None) or {}
    return not any(getattr(st.get("stage"), "name", "READY") != "READY" for st in states.values())


class FpkitDumper:
    """Records parameter gradients, weights, applied updates and activation
    gradients of MODEL to one safetensors file per recorded step in OUTDIR.

    A step is recorded when its number is in STEPS, if given, otherwise when
    it is a multiple of EVERY.  GRADS, WEIGHTS and UPDATES choose which of
    grad/, weight/ and update/ are written.  ACTIVATIONS is True (a backward
    hook on every leaf module: one without children), False (none), or an
    iterable of module names (those modules, leaves or not).

    update/P, the weight after the step minus the weight before it, is
    computed in float64 and stored in UPDATE_DTYPE, by default each
    parameter's own dtype; there it is exact whenever the weight kept its
    sign and moved by at most a factor of two (Sterbenz), the usual case.
    With torch.float64 the update of a float32 or narrower weight is exact
    unless the weight moved by more than a factor of 2^29.

    actgrad/L tensors follow the order of model.named_modules(); a module
    called more than once in a step gives L, L@1, L@2 ... in the order the
    gradients arrive (the reverse of the forward calls).  Tensors are copied
    to the CPU as they are recorded; nothing is kept between recorded steps.
    The backward hooks need the modules' outputs not to be modified in
    place (use ReLU(inplace=False)).

    With STATS, a dict of device_stats()'s options (formats, scale, round,
    ftz, saturate, lib), the tensors are not copied or written: their
    statistics are computed on their device as they are recorded (weights
    before the step and updates in after_step(), from a copy of the weights
    kept on the device) and each step goes to step-NNNNNN.jsonl.

    SCALER, a torch.amp.GradScaler (or torch.cuda.amp's), gives each
    recorded step's loss_scale: its get_scale() at before_step().  The
    gradients are recorded as they are then, times that scale unless the
    scaler has unscaled them already; metadata grads_scaled says which.

    RANK and WORLD_SIZE (both or neither; by default torch.distributed's
    when it is initialized, so create the dumper after
    init_process_group()) make each rank write its own file,
    step_file_name(step, rank, world_size), when WORLD_SIZE is above 1.
    With REPLICATED (the default) the parameters are alike on every rank,
    as under DistributedDataParallel, and rank 0 alone records grad/,
    weight/ and update/; with REPLICATED False every rank records its own.
    Every rank records the activation gradients of its part of the batch.
    """

    def __init__(self, model, outdir, every=1, steps=None, grads=True, weights=True,
                 updates=True, activations=True, update_dtype=None, first_step=0, stats=None,
                 scaler=None, rank=None, world_size=None, replicated=True):
        if every < 1:
            raise ValueError("every must be at least 1, not %r" % every)
        if scaler is not None and not all(callable(getattr(scaler, m, None))
                                          for m in ("get_scale", "is_enabled")):
            raise TypeError("scaler must be a GradScaler, not %r" % type(scaler).__name__)
        self.rank, self.world_size = _rank_and_world(rank, world_size)
        self.scaler = scaler
        # whether this rank records the parameters' tensors
        self._params = self.rank == 0 or not replicated
        self.model = model
        self.outdir = outdir
        self.every = every
        self.steps = None if steps is None else frozenset(int(s) for s in steps)
        self.grads = grads
        self.weights = weights
        self.updates = updates
        self.update_dtype = update_dtype
        self._next_step = first_step  # the step whose backward comes next
        self._captured = []           # (layer, name, tensor) of actgrads, in arrival order
        self._layers = {}             # hooked layer -> its place in named_modules()
        self._captured_step = None    # the step they belong to
        self._pending = None          # the record waiting for after_step()
        self._hooks = []
        self._stats = None
        if stats is not None:
            known = {"formats", "scale", "round", "ftz", "saturate", "lib"}
            unknown = sorted(set(stats) - known)
            if unknown:
                raise ValueError("unknown device statistics option %s" % ", ".join(unknown))
            self._stats = dict(stats)
            self._stats["lib"] = load_cuda_library(self._stats.get("lib"))
        os.makedirs(outdir, exist_ok=True)
        if activations:
            modules = dict(model.named_modules())
            if activations is True:
                names = [n for n, m in modules.items() if not any(True for _ in m.children())]
            else:
                names = list(activations)
                unknown = [n for n in names if n not in modules]
                if unknown:
                    raise ValueError("no module named %s in the model"
                                     % ", ".join(map(repr, unknown)))
            for name in names:
                layer = name or "model"
                self._layers[layer] = len(self._layers)
                self._hooks.append(self._hook(modules[name], layer))

    def records(self, step):
        """Whether step number STEP is recorded."""
        if self.steps is not None:
            return step in self.steps
        return step % self.every == 0

    def begin_step(self, step):
        """Say that the next backward pass belongs to step STEP.  Needed only
        when steps are not numbered consecutively from first_step."""
        self._next_step = step

    def _hook(self, module, layer):
        """Hooks MODULE, recorded as LAYER, and returns the handle: a full
        backward pre-hook, which is given the gradient of the output (torch
        2.0 and later: a full backward hook warns at every step on a first
        layer, whose input needs no gradient), else a full backward hook."""
        def take(grad_output):
            if (not self.records(self._next_step) or not grad_output or grad_output[0] is None
                    or grad_output[0].dtype not in _ST_DTYPES):
                return
            if self._captured_step != self._next_step:
                self._captured = []
                self._captured_step = self._next_step
            taken = sum(1 for c in self._captured if c[0] == layer)
            name = layer if taken == 0 else "%s@%d" % (layer, taken)
            self._captured.append((layer, name, self._take(grad_output[0])))
        if hasattr(module, "register_full_backward_pre_hook"):
            return module.register_full_backward_pre_hook(lambda m, grad_output: take(grad_output))
        return module.register_full_backward_hook(lambda m, grad_input, grad_output:
                                                  take(grad_output))

    def before_step(self, step, loss, loss_scale=None):
        """Call after backward and before optimizer.step() (scaler.step()).
        If STEP is recorded, copies the gradients, the weights and the
        activation gradients of this backward pass; LOSS (a number or a
        one-element tensor) and LOSS_SCALE (the factor the loss was
        multiplied by before backward: None for 1, or for the scaler's
        scale) go into the metadata.  The file is written by after_step(),
        or at once when updates are not recorded.  Returns whether STEP is
        recorded."""
        if loss_scale is not None and self.scaler is not None:
            raise ValueError("before_step: loss_scale=%r given to a dumper with a scaler, "
                             "whose get_scale() is the loss scale" % (loss_scale,))
        self._next_step = step + 1
        if self._pending is not None:
            warnings.warn("fpkit_dump: after_step() was not called for step %s; its updates "
                          "are not recorded" % self._pending["step"])
            self._write(self._pending)
            self._pending = None
        captured, self._captured = self._captured, []
        if not self.records(step):
            return False
        if self._captured_step != step:
            if captured:
                warnings.warn("fpkit_dump: the activation gradients of step %s were taken for "
                              "step %s; call begin_step(%s) before its forward pass"
                              % (step, self._captured_step, step))
            captured = []
        if self.scaler is not None:
            loss_scale = self.scaler.get_scale()
        metadata = {
            "step": str(step),
            "loss": _number_text(loss.detach() if torch.is_tensor(loss) else loss),
            "loss_scale": _number_text(1 if loss_scale is None else loss_scale),
            "fpkit_dump": LAYOUT_VERSION,
            "torch": torch.__version__,
        }
        if self.scaler is not None:
            metadata["grads_scaled"] = "1" if _grads_scaled(self.scaler) else "0"
        if self.world_size > 1:
            metadata["rank"] = str(self.rank)
            metadata["world_size"] = str(self.world_size)
        record = {
            "step": step,
            "metadata": metadata,
            "grad": [],
            "weight": [],
            "before": [],
            "actgrad": [("actgrad/" + c[1], c[2]) for c in
                        sorted(captured, key=lambda c: self._layers[c[0]])],
        }
        for name, p in self.model.named_parameters() if self._params else ():
            if p.dtype not in _ST_DTYPES:
                continue
            if self.grads and p.grad is not None:
                g = p.grad.detach()
                g = g.to_dense() if g.is_sparse else g
                record["grad"].append(("grad/" + name, self._take(g)))
            if self.weights or self.updates:
                record["before"].append((name, p, self._keep(p)))
        if self.weights:
            record["weight"] = [("weight/" + n, w) for n, _, w in record["before"]]
        if self.updates:
            self._pending = record
        else:
            self._write(record)
        return True

    def after_step(self):
        """Call after optimizer.step(): records the updates of the step given
        to the last before_step() and writes its file.  Returns the file's
        path, or None when that step is not recorded."""
        record, self._pending = self._pending, None
        if record is None:
            return None
        return self._write(record, with_updates=True)

    def _write(self, record, with_updates=False):
        """Writes RECORD's file, with the updates when WITH_UPDATES (the
        optimizer step has run); returns its path."""
        updates = []
        if with_updates:
            for name, p, before in record["before"]:
                after = self._keep(p)
                dtype = before.dtype if self.update_dtype is None else self.update_dtype
                diff = after.to(torch.float64) - before.to(torch.float64)
                updates.append(("update/" + name, diff.to(dtype)))
        tensors = record["grad"] + record["weight"] + updates + record["actgrad"]
        if self._stats is not None:
            return self._write_stats(record, tensors)
        path = os.path.join(self.outdir, step_file_name(record["step"], self.rank,
                                                        self.world_size))
        write_safetensors(path, tensors, record["metadata"])
        return path

    def _take(self, t):
        """What is recorded of tensor T: a CPU copy, or its statistics."""
        if self._stats is None:
            return t.detach().to("cpu", copy=True)
        return self._device_stats(t)

    def _keep(self, t):
        """A copy of T, on the CPU or, for statistics, where T is."""
        if self._stats is None:
            return t.detach().to("cpu", copy=True)
        return t.detach().clone()

    def _device_stats(self, t):
        return device_stats(t, **self._stats)

    def _write_stats(self, record, tensors):
        """Writes the step's .jsonl file (step_file_name()): a line per tensor;
        returns its path."""
        meta = record["metadata"]
        lines = []
        for name, t in tensors:
            st = t if isinstance(t, dict) else self._device_stats(t)
            line = {"tensor": name, "step": record["step"], "loss": meta["loss"],
                    "loss_scale": meta["loss_scale"]}
            line.update(st)
            lines.append(json.dumps(line, separators=(",", ":")) + "\n")
        path = os.path.join(self.outdir, step_file_name(record["step"], self.rank,
                                                        self.world_size, "jsonl"))
        data = "".join(lines).encode("utf-8")
        _replace_file(path, lambda f: f.write(data))
        return path

    def close(self):
        """Write any step still waiting for after_step() and remove the
        hooks."""
        if self._pending is not None:
            self._write(self._pending)
            self._pending = None
        for h in self._hooks:
            h.remove()
        self._hooks = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


class _DemoNet(torch.nn.Module):
    """A tiny convolutional classifier of 1x8x8 images into 10 classes."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(1, 4, 3, padding=1)
        self.relu = torch.nn.ReLU()
        self.pool = torch.nn.MaxPool2d(2)
        self.flat = torch.nn.Flatten()
        self.fc = torch.nn.Linear(4 * 4 * 4, 10)

    def forward(self, x):
        return self.fc(self.flat(self.pool(self.relu(self.conv(x)))))


def demo(outdir, steps=4, every=1, loss_scale=1.0, lr=0.0625, seed=0, stats=None, cuda=False):
    """Train _DemoNet for STEPS steps of plain SGD (learning rate LR) on
    random data made from SEED, recording every EVERY-th step in OUTDIR.
    The loss is multiplied by LOSS_SCALE before backward and the gradients
    divided by it before the step, as static loss scaling does, so the
    activation gradients carry the scale and the parameter gradients do
    not (exactly so for a power of two).  With CUDA, the model trains on
    the GPU and its tensors are dumped from there; with STATS
    (FpkitDumper's) too, and the steps are recorded as device statistics.
    Returns the paths written."""
    torch.manual_seed(seed)
    torch.set_num_threads(1)
    model = _DemoNet()
    x = torch.randn(steps, 8, 1, 8, 8)
    y = torch.randint(0, 10, (steps, 8))
    if cuda or stats is not None:
        model, x, y = model.to("cuda"), x.to("cuda"), y.to("cuda")
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    paths = []
    with FpkitDumper(model, outdir, every=every, stats=stats) as dumper:
        for step in range(steps):
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(x[step]), y[step])
            (loss * loss_scale).backward()
            for p in model.parameters():
                p.grad.div_(loss_scale)
            dumper.before_step(step, loss, loss_scale=loss_scale)
            opt.step()
            path = dumper.after_step()
            if path:
                paths.append(path)
    return paths


def _positive_int(text):
    """An argparse type: an integer of at least 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError("%r is not an integer of at least 1" % text)
    return value


def _positive_float(text):
    """An argparse type: a finite number above 0."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (0 < value < math.inf):
        raise argparse.ArgumentTypeError("%r is not a finite number above 0" % text)
    return value


def main(argv=None):
    """The command line: --demo OUTDIR and the options of demo()."""
    ap = argparse.ArgumentParser(
        description="Record PyTorch gradients for fpkit; with --demo, train a tiny model "
                    "and dump its steps (or their device statistics) into OUTDIR.")
    ap.add_argument("--demo", metavar="OUTDIR", required=True,
                    help="train the demo model and write its dumps here")
    ap.add_argument("--steps", type=_positive_int, default=4,
                    help="training steps (default 4)")
    ap.add_argument("--every", type=_positive_int, default=1,
                    help="record every N-th step (default 1)")
    ap.add_argument("--loss-scale", type=_positive_float, default=1.0,
                    help="static loss scale (default 1)")
    ap.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    ap.add_argument("--cuda", action="store_true",
                    help="train on the GPU: the dumps hold the GPU's tensors")
    ap.add_argument("--device-stats", action="store_true",
                    help="train on the GPU and write device statistics (step-NNNNNN.jsonl) "
                         "instead of dumps")
    ap.add_argument("--formats", default="fp16,bf16,e4m3,e5m2",
                    help="formats of the device statistics (default fp16,bf16,e4m3,e5m2)")
    args = ap.parse_args(argv)
    if (args.cuda or args.device_stats) and not torch.cuda.is_available():
        ap.error("%s: torch %s sees no CUDA device"
                 % ("--cuda" if args.cuda else "--device-stats", torch.__version__))
    stats = {"formats": args.formats} if args.device_stats else None
    for path in demo(args.demo, steps=args.steps, every=args.every,
                     loss_scale=args.loss_scale, seed=args.seed, stats=stats, cuda=args.cuda):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
