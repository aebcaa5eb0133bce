"""q8rt from Python: an int8 ONNX inference runtime, with an API close to ONNX Runtime's.

    import numpy as np, q8rt
    sess = q8rt.Session("model.onnx", threads=2, backend="auto")
    x = sess.get_inputs()[0]
    (y,) = sess.run(None, {x.name: np.zeros([d or 1 for d in x.shape], x.dtype)})
    print(sess.explain(), sess.profile())

Pure ctypes over libq8rt.so (no compiled extension): the library is the one packaged next to this
file by `pip install` (which builds it with `make`), or the one named by the environment variable
Q8RT_LIBRARY. Every q8rt error becomes a q8rt.Error subclass (InvalidArgument, InvalidModel,
Unsupported, OutOfMemory, IOError_, ShapeError, StateError) whose message is q8rt's, naming the
node, attribute or input at fault.

Memory: run() copies the inputs into the session's arena and, by default, copies the outputs out
(as ONNX Runtime does). Zero-copy: input_buffer(name) is a writable NumPy view of an input's arena
buffer (fill it, then run(None, {})), and run(..., copy_outputs=False) returns read-only views of
the arena, valid until the next run, set of inputs or close().
"""

from __future__ import annotations

import ctypes as C
import os
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Union

import numpy as np

__all__ = ["Session", "NodeArg", "Error", "version", "get_library_path", "BACKENDS"]

# ---- the library ----------------------------------------------------------------------------------

MAX_RANK = 8


class _Error(C.Structure):
    _fields_ = [("status", C.c_int), ("message", C.c_char * 512)]


class _TensorInfo(C.Structure):
    _fields_ = [("name", C.c_char_p), ("dtype", C.c_int), ("rank", C.c_int), ("shape", C.c_int64 * MAX_RANK),
                ("has_quantization", C.c_int), ("scale", C.c_float), ("zero_point", C.c_int32)]


class _ModelOptions(C.Structure):
    _fields_ = [("size", C.c_size_t), ("allocator", C.c_void_p), ("backend", C.c_int),
                ("max_model_bytes", C.c_size_t), ("max_unpack_bytes", C.c_size_t),
                ("external_data_dir", C.c_char_p)]


class _SessionOptions(C.Structure):
    _fields_ = [("size", C.c_size_t), ("allocator", C.c_void_p), ("threads", C.c_int),
                ("max_arena_bytes", C.c_size_t), ("profile", C.c_int), ("max_memory_bytes", C.c_size_t),
                ("max_loop_iterations", C.c_uint64)]


class _StepProfile(C.Structure):
    _fields_ = [("op_type", C.c_char_p), ("node_name", C.c_char_p), ("kernel", C.c_char_p),
                ("milliseconds", C.c_double)]


def get_library_path() -> str:
    env = os.environ.get("Q8RT_LIBRARY")
    if env:
        return env
    here = Path(__file__).resolve().parent
    for name in ("libq8rt.so", "libq8rt.so.0"):
        if (here / name).exists():
            return str(here / name)
    # a source checkout: examples/python/q8rt -> build/libq8rt.so
    built = here.parents[2] / "build" / "libq8rt.so"
    if built.exists():
        return str(built)
    return "libq8rt.so.0"  # the system's, through the loader's search path


def _load() -> C.CDLL:
    lib = C.CDLL(get_library_path())
    P, E, V = C.c_void_p, C.POINTER(_Error), C.POINTER(C.c_void_p)
    sig = {
        "q8rt_version": (C.c_char_p, []),
        "q8rt_status_string": (C.c_char_p, [C.c_int]),
        "q8rt_model_load_file": (C.c_int, [C.c_char_p, C.POINTER(_ModelOptions), V, E]),
        "q8rt_model_load_memory": (C.c_int, [C.c_char_p, C.c_size_t, C.POINTER(_ModelOptions), V, E]),
        "q8rt_model_free": (None, [P]),
        "q8rt_model_input_count": (C.c_size_t, [P]),
        "q8rt_model_output_count": (C.c_size_t, [P]),
        "q8rt_model_input_info": (C.c_int, [P, C.c_size_t, C.POINTER(_TensorInfo), E]),
        "q8rt_model_output_info": (C.c_int, [P, C.c_size_t, C.POINTER(_TensorInfo), E]),
        "q8rt_model_explain": (C.c_size_t, [P, C.c_char_p, C.c_size_t]),
        "q8rt_model_metadata_count": (C.c_size_t, [P]),
        "q8rt_model_metadata_entry": (C.c_int, [P, C.c_size_t, C.POINTER(C.c_char_p), C.POINTER(C.c_void_p),
                                                C.POINTER(C.c_size_t), E]),
        "q8rt_session_create": (C.c_int, [P, C.POINTER(_SessionOptions), V, E]),
        "q8rt_session_free": (None, [P]),
        "q8rt_session_set_input": (C.c_int, [P, C.c_size_t, C.POINTER(C.c_int64), C.c_int, C.c_void_p,
                                             C.c_size_t, E]),
        "q8rt_session_set_input_shape": (C.c_int, [P, C.c_size_t, C.POINTER(C.c_int64), C.c_int, E]),
        "q8rt_session_input_buffer": (C.c_int, [P, C.c_size_t, V, C.POINTER(C.c_size_t), E]),
        "q8rt_session_run": (C.c_int, [P, E]),
        "q8rt_session_get_output": (C.c_int, [P, C.c_size_t, C.POINTER(_TensorInfo), V, C.POINTER(C.c_size_t), E]),
        "q8rt_session_arena_size": (C.c_size_t, [P]),
        "q8rt_session_profile": (C.c_size_t, [P, C.POINTER(_StepProfile), C.c_size_t]),
    }
    for name, (res, args) in sig.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args
    return lib


_lib: Optional[C.CDLL] = None


def _L() -> C.CDLL:
    global _lib
    if _lib is None:
        _lib = _load()
    return _lib


def version() -> str:
    """The version of the loaded libq8rt ("0.1.0")."""
    return _L().q8rt_version().decode()


# ---- errors -------------------------------------------------------------------------------------

class Error(RuntimeError):
    """A q8rt call failed. .status is q8rt's status name, str(e) q8rt's message."""
    status = "error"


class InvalidArgument(Error, ValueError):
    status = "invalid argument"


class InvalidModel(Error):
    status = "invalid model"


class Unsupported(Error):
    status = "unsupported"


class OutOfMemory(Error, MemoryError):
    status = "out of memory"


class IOError_(Error, OSError):
    status = "I/O error"


class ShapeError(Error, ValueError):
    status = "shape"


class StateError(Error):
    status = "state"


class LimitError(Error):
    # a run went past a configured cap (max_loop_iterations)
    status = "limit"


_BY_STATUS = {1: InvalidArgument, 2: InvalidModel, 3: Unsupported, 4: OutOfMemory, 5: IOError_, 6: ShapeError,
              7: StateError, 8: LimitError}


def _name(raw: Optional[bytes]) -> str:
    """A name from the model as str. ONNX names should be UTF-8, but a model may hold any bytes:
    bytes that are not UTF-8 decode to lone surrogates (surrogateescape), so every name is a str,
    distinct byte names stay distinct keys, and name.encode("utf-8", "surrogateescape") gives the
    model's bytes back."""
    return (raw or b"").decode("utf-8", "surrogateescape")


def _check(st: int, err: _Error) -> None:
    if st != 0:
        raise _BY_STATUS.get(st, Error)(err.message.decode(errors="replace"))


# ---- types --------------------------------------------------------------------------------------

_DTYPES = {1: np.float32, 2: np.uint8, 3: np.int8, 4: np.uint16, 5: np.int16, 6: np.int32, 7: np.int64, 9: np.bool_,
           10: np.float16}
_ONNX_NAMES = {1: "float", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64", 9: "bool",
               10: "float16"}
BACKENDS = {"auto": 0, "reference": 1, "avx2": 2, "neon": 3, "xnnpack": 4, "avx512": 5}


class NodeArg:
    """An input or output, as onnxruntime.NodeArg: name, type ("tensor(uint8)"), shape (None for a
    dimension not bound yet), plus dtype (NumPy) and the quantization the model fixes, if any."""

    def __init__(self, info: _TensorInfo):
        self.name = _name(info.name)
        self.dtype = np.dtype(_DTYPES.get(info.dtype, np.uint8))
        self.type = f"tensor({_ONNX_NAMES.get(info.dtype, 'undefined')})"
        self.shape: List[Optional[int]] = [None if info.shape[d] < 0 else int(info.shape[d]) for d in range(info.rank)]
        self.scale = float(info.scale) if info.has_quantization else None
        self.zero_point = int(info.zero_point) if info.has_quantization else None

    def __repr__(self) -> str:
        q = f", scale={self.scale}, zero_point={self.zero_point}" if self.scale is not None else ""
        return f"NodeArg(name={self.name!r}, type={self.type!r}, shape={self.shape}{q})"


class ModelMetadata:
    """As onnxruntime.ModelMetadata: custom_metadata_map holds ModelProto.metadata_props."""

    def __init__(self, props: Dict[str, str]):
        self.custom_metadata_map = props


# ---- the session --------------------------------------------------------------------------------

class Session:
    """A loaded model and one session on it (q8rt_model + q8rt_session).

    Session(model, threads=1, backend="auto", profile=False, max_arena_bytes=0, max_loop_iterations=0)
      model: a path or the model's bytes. backend: "auto", "reference", "avx2", "avx512", "neon",
      "xnnpack" (forcing a backend fails to load where it cannot run a node, naming it).
    Not thread-safe: use one Session per thread (as with q8rt_session)."""

    def __init__(self, model: Union[str, os.PathLike, bytes], threads: int = 1, backend: str = "auto",
                 profile: bool = False, max_arena_bytes: int = 0, max_loop_iterations: int = 0):
        L = _L()
        self._model = C.c_void_p()
        self._session = C.c_void_p()
        if backend not in BACKENDS:
            raise InvalidArgument(f"unknown backend {backend!r}; one of {', '.join(BACKENDS)}")
        # The options structs are filled here, not by *_options_init: .size says how much of the
        # struct this module knows, and the library takes defaults for fields added after it
        # (init would write the library's whole, possibly larger, struct into this one).
        mo = _ModelOptions(size=C.sizeof(_ModelOptions), backend=BACKENDS[backend])
        err = _Error()
        if isinstance(model, (bytes, bytearray, memoryview)):
            data = bytes(model)
            _check(L.q8rt_model_load_memory(data, len(data), C.byref(mo), C.byref(self._model), C.byref(err)), err)
        else:
            _check(L.q8rt_model_load_file(os.fsencode(model), C.byref(mo), C.byref(self._model), C.byref(err)), err)
        so = _SessionOptions(size=C.sizeof(_SessionOptions), threads=int(threads), profile=1 if profile else 0,
                             max_arena_bytes=int(max_arena_bytes), max_loop_iterations=int(max_loop_iterations))
        try:
            _check(L.q8rt_session_create(self._model, C.byref(so), C.byref(self._session), C.byref(err)), err)
        except Error:
            self.close()
            raise
        self._inputs = [self._info(L.q8rt_model_input_info, i) for i in range(L.q8rt_model_input_count(self._model))]
        self._outputs = [self._info(L.q8rt_model_output_info, i)
                         for i in range(L.q8rt_model_output_count(self._model))]
        self._in_index = {a.name: i for i, a in enumerate(self._inputs)}
        self._out_index = {a.name: i for i, a in enumerate(self._outputs)}
        self._bound: Dict[int, tuple] = {}

    def _info(self, fn, i: int) -> NodeArg:
        info, err = _TensorInfo(), _Error()
        _check(fn(self._model, i, C.byref(info), C.byref(err)), err)
        return NodeArg(info)

    def close(self) -> None:
        """Free the session and the model (also done when the object is collected)."""
        if getattr(self, "_session", None):
            _L().q8rt_session_free(self._session)
            self._session = C.c_void_p()
        if getattr(self, "_model", None):
            _L().q8rt_model_free(self._model)
            self._model = C.c_void_p()

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _live(self) -> None:
        if not self._session:
            raise StateError("the session is closed")

    # -- description --

    def get_inputs(self) -> List[NodeArg]:
        return list(self._inputs)

    def get_outputs(self) -> List[NodeArg]:
        return list(self._outputs)

    def get_modelmeta(self) -> ModelMetadata:
        return ModelMetadata({k: v.decode(errors="replace") for k, v in self.metadata_bytes().items()})

    def metadata_bytes(self) -> Dict[str, bytes]:
        """ModelProto.metadata_props as raw bytes (q8rt_model_metadata_entry)."""
        self._live()
        L, out = _L(), {}
        for i in range(L.q8rt_model_metadata_count(self._model)):
            k, v, n, err = C.c_char_p(), C.c_void_p(), C.c_size_t(), _Error()
            _check(L.q8rt_model_metadata_entry(self._model, i, C.byref(k), C.byref(v), C.byref(n), C.byref(err)), err)
            out[k.value.decode(errors="replace")] = C.string_at(v, n.value) if n.value else b""
        return out

    def explain(self) -> str:
        """The execution plan: one line per step (op, node, kernel and why)."""
        self._live()
        L = _L()
        n = L.q8rt_model_explain(self._model, None, 0)
        buf = C.create_string_buffer(n + 1)
        L.q8rt_model_explain(self._model, buf, n + 1)
        return buf.value.decode(errors="replace")

    def profile(self) -> List[dict]:
        """Per-step times of the last run (the session must be created with profile=True):
        dicts with op_type, node, kernel, ms."""
        self._live()
        L = _L()
        n = L.q8rt_session_profile(self._session, None, 0)
        steps = (_StepProfile * max(n, 1))()
        n = L.q8rt_session_profile(self._session, steps, n)
        return [{"op_type": _name(s.op_type), "node": _name(s.node_name), "kernel": _name(s.kernel),
                 "ms": float(s.milliseconds)} for s in steps[:n]]

    @property
    def arena_size(self) -> int:
        return int(_L().q8rt_session_arena_size(self._session)) if self._session else 0

    # -- running --

    def _index(self, name: str) -> int:
        if name not in self._in_index:
            raise InvalidArgument(f"the model has no input named {name!r} (inputs: "
                                  f"{', '.join(a.name for a in self._inputs)})")
        return self._in_index[name]

    def set_input_shape(self, name: str, shape: Sequence[int]) -> None:
        """Bind an input's shape without data (symbolic dimensions)."""
        self._live()
        i, err = self._index(name), _Error()
        dims = (C.c_int64 * MAX_RANK)(*shape)
        _check(_L().q8rt_session_set_input_shape(self._session, i, dims, len(shape), C.byref(err)), err)
        self._bound[i] = tuple(shape)

    def input_buffer(self, name: str) -> np.ndarray:
        """A writable view of the input's buffer in the arena (zero-copy input); its shape must be
        bound (static, or by set_input_shape / an earlier run). Valid until a shape change."""
        self._live()
        i, err = self._index(name), _Error()
        ptr, n = C.c_void_p(), C.c_size_t()
        _check(_L().q8rt_session_input_buffer(self._session, i, C.byref(ptr), C.byref(n), C.byref(err)), err)
        a = self._inputs[i]
        shape = self._bound.get(i) or tuple(a.shape)
        buf = (C.c_uint8 * n.value).from_address(ptr.value)
        return np.frombuffer(buf, dtype=a.dtype).reshape(shape)

    def run(self, output_names: Optional[Sequence[str]], input_feed: Dict[str, np.ndarray],
            copy_outputs: bool = True) -> List[np.ndarray]:
        """Set the inputs of input_feed (name -> array; converted to C order, dtype must match),
        run, and return the outputs named (None: all), as onnxruntime.InferenceSession.run."""
        self._live()
        L, err = _L(), _Error()
        for name, value in input_feed.items():
            i = self._index(name)
            arr = np.asarray(value)
            want = self._inputs[i].dtype
            if arr.dtype != want:
                raise InvalidArgument(f"input {name!r}: got {arr.dtype}, the model takes {want}")
            arr = np.ascontiguousarray(arr).reshape(arr.shape)  # ascontiguousarray makes a scalar 1-D
            if arr.ndim > MAX_RANK:
                raise InvalidArgument(f"input {name!r}: rank {arr.ndim} > {MAX_RANK}")
            dims = (C.c_int64 * MAX_RANK)(*arr.shape)
            _check(L.q8rt_session_set_input(self._session, i, dims, arr.ndim, arr.ctypes.data_as(C.c_void_p),
                                            arr.nbytes, C.byref(err)), err)
            self._bound[i] = arr.shape
        _check(L.q8rt_session_run(self._session, C.byref(err)), err)
        if output_names is None:
            idx = list(range(len(self._outputs)))
        else:
            idx = []
            for n in output_names:
                if n not in self._out_index:
                    raise InvalidArgument(f"the model has no output named {n!r} (outputs: "
                                          f"{', '.join(a.name for a in self._outputs)})")
                idx.append(self._out_index[n])
        outs = []
        for i in idx:
            info, ptr, nbytes = _TensorInfo(), C.c_void_p(), C.c_size_t()
            _check(L.q8rt_session_get_output(self._session, i, C.byref(info), C.byref(ptr), C.byref(nbytes),
                                             C.byref(err)), err)
            shape = tuple(int(info.shape[d]) for d in range(info.rank))
            dtype = np.dtype(_DTYPES[info.dtype])
            if nbytes.value == 0:
                outs.append(np.zeros(shape, dtype))
                continue
            view = np.frombuffer((C.c_uint8 * nbytes.value).from_address(ptr.value), dtype=dtype).reshape(shape)
            if copy_outputs:
                outs.append(view.copy())
            else:
                view.flags.writeable = False
                outs.append(view)
        return outs


InferenceSession = Session  # the name ONNX Runtime users reach for
__version__ = "0.1.0"
