#include "tensors.h"

#include <pybind11/numpy.h>

#include <cstring>

#include "errors.h"

namespace lathe::python {

thread_local bool CallerArrays::torch_ = false;

namespace {

// ---- DLPack (the stable v0 ABI: "dltensor" capsules) ------------------------------------
struct DLDevice {
  int32_t device_type;  // 1: CPU
  int32_t device_id;
};
struct DLDataType {
  uint8_t code;  // 0 int, 1 uint, 2 float, 4 bfloat, 6 bool
  uint8_t bits;
  uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;  // in elements; nullptr: contiguous
  uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor*);
};

std::optional<DType> from_dl(DLDataType t) {
  if (t.lanes != 1) return std::nullopt;
  switch (t.code) {
    case 0: return t.bits == 8 ? DType::Int8 : t.bits == 16 ? DType::Int16 : t.bits == 32 ? DType::Int32
                 : t.bits == 64 ? std::optional(DType::Int64) : std::nullopt;
    case 1: return t.bits == 8 ? std::optional(DType::UInt8) : std::nullopt;
    case 2: return t.bits == 16 ? DType::Float16 : t.bits == 32 ? DType::Float32
                 : t.bits == 64 ? std::optional(DType::Float64) : std::nullopt;
    case 4: return t.bits == 16 ? std::optional(DType::BFloat16) : std::nullopt;
    case 6: return t.bits == 8 ? std::optional(DType::Bool) : std::nullopt;
    default: return std::nullopt;
  }
}

std::optional<DLDataType> to_dl(DType d) {
  switch (d) {
    case DType::Int8: return DLDataType{0, 8, 1};
    case DType::Int16: return DLDataType{0, 16, 1};
    case DType::Int32: return DLDataType{0, 32, 1};
    case DType::Int64: return DLDataType{0, 64, 1};
    case DType::UInt8: return DLDataType{1, 8, 1};
    case DType::Float16: return DLDataType{2, 16, 1};
    case DType::Float32: return DLDataType{2, 32, 1};
    case DType::Float64: return DLDataType{2, 64, 1};
    case DType::BFloat16: return DLDataType{4, 16, 1};
    case DType::Bool: return DLDataType{6, 8, 1};
    default: return std::nullopt;
  }
}

// Keeps a Python object alive from C++; released with the GIL held.
std::shared_ptr<const void> keep(py::object o) {
  return std::shared_ptr<const void>(new py::object(std::move(o)), [](const py::object* p) {
    py::gil_scoped_acquire gil;
    delete p;
  });
}

std::string where(size_t index) { return "input " + std::to_string(index); }

Tensor from_dlpack(const py::handle& value, size_t index) {
  py::object t = py::reinterpret_borrow<py::object>(value);
  // Sparse, quantized, nested, mkldnn and meta tensors have no DLPack form:
  // torch raises BufferError or RuntimeError, which callers are promised as
  // lathe.Error like every other failure (issue 33, item 20).
  py::capsule capsule;
  try {
    if (t.attr("requires_grad").cast<bool>()) t = t.attr("detach")();
    // A lazily negated or conjugated view (z.conj().imag): DLPack hands over the
    // stored values without the pending negation, so resolve it first (a copy).
    if (py::hasattr(t, "is_neg") && t.attr("is_neg")().cast<bool>()) t = t.attr("resolve_neg")();
    if (py::hasattr(t, "is_conj") && t.attr("is_conj")().cast<bool>()) t = t.attr("resolve_conj")();
    capsule = t.attr("__dlpack__")();
  } catch (py::error_already_set& e) {
    throw LatheError(where(index) + ": a " + py::str(py::type::of(t).attr("__name__")).cast<std::string>() +
                     " that cannot be viewed as a dense CPU array (" + std::string(e.what()) + ")");
  }
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
  if (!managed) throw py::error_already_set();
  PyCapsule_SetName(capsule.ptr(), "used_dltensor");
  // From here on the managed tensor is ours: its deleter runs with the storage.
  auto owner = std::shared_ptr<const void>(managed, [](DLManagedTensor* m) {
    if (m->deleter) {
      py::gil_scoped_acquire gil;
      m->deleter(m);
    }
  });
  const DLTensor& dl = managed->dl_tensor;
  if (dl.device.device_type != 1) throw LatheError(where(index) + ": only CPU tensors can be passed (device type " + std::to_string(dl.device.device_type) + ")");
  auto dtype = from_dl(dl.dtype);
  if (!dtype) throw LatheError(where(index) + ": unsupported tensor dtype (DLPack code " + std::to_string(dl.dtype.code) + ", " + std::to_string(dl.dtype.bits) + " bits)");
  Tensor out;
  out.dtype = *dtype;
  out.sizes.assign(dl.shape, dl.shape + dl.ndim);
  out.strides = dl.strides ? std::vector<int64_t>(dl.strides, dl.strides + dl.ndim) : Tensor::contiguous_strides(out.sizes);
  // The storage spans every element the strides reach (non-negative strides only).
  int64_t extent = 1;
  for (int32_t i = 0; i < dl.ndim; ++i) {
    if (out.sizes[i] == 0) extent = 0;
    if (out.strides[i] < 0) throw LatheError(where(index) + ": negative strides are not supported");
  }
  if (extent) for (int32_t i = 0; i < dl.ndim; ++i) extent += (out.sizes[i] - 1) * out.strides[i];
  const auto* base = static_cast<const std::byte*>(dl.data) + dl.byte_offset;
  out.storage = Storage::view(std::move(owner), base, static_cast<size_t>(extent) * dtype_size(out.dtype));
  return out;
}

std::optional<DType> from_numpy(const py::dtype& dt) {
  const char kind = dt.kind();
  const auto size = dt.itemsize();
  if (kind == 'f') return size == 2 ? DType::Float16 : size == 4 ? DType::Float32 : size == 8 ? std::optional(DType::Float64) : std::nullopt;
  if (kind == 'i') return size == 1 ? DType::Int8 : size == 2 ? DType::Int16 : size == 4 ? DType::Int32 : size == 8 ? std::optional(DType::Int64) : std::nullopt;
  if (kind == 'u') return size == 1 ? std::optional(DType::UInt8) : std::nullopt;
  if (kind == 'b') return DType::Bool;
  return std::nullopt;
}

Tensor from_array(py::array a, size_t index) {
  auto dtype = from_numpy(a.dtype());
  if (!dtype) throw LatheError(where(index) + ": unsupported array dtype " + py::str(a.dtype()).cast<std::string>());
  if (a.dtype().byteorder() == '>') throw LatheError(where(index) + ": big-endian arrays are not supported");
  const auto item = static_cast<int64_t>(a.itemsize());
  bool fits = true;
  for (py::ssize_t i = 0; i < a.ndim(); ++i) fits = fits && a.strides(i) >= 0 && a.strides(i) % item == 0;
  if (!fits) a = py::array::ensure(py::module_::import("numpy").attr("ascontiguousarray")(a));
  Tensor out;
  out.dtype = *dtype;
  int64_t extent = 1;
  for (py::ssize_t i = 0; i < a.ndim(); ++i) {
    out.sizes.push_back(a.shape(i));
    out.strides.push_back(a.strides(i) / item);
    if (a.shape(i) == 0) extent = 0;
  }
  if (extent) for (size_t i = 0; i < out.sizes.size(); ++i) extent += (out.sizes[i] - 1) * out.strides[i];
  const auto* data = static_cast<const std::byte*>(a.data());
  out.storage = Storage::view(keep(a), data, static_cast<size_t>(extent) * dtype_size(out.dtype));
  return out;
}

py::dtype numpy_dtype(DType d) {
  switch (d) {
    case DType::Float16: return py::dtype("float16");
    case DType::Float32: return py::dtype::of<float>();
    case DType::Float64: return py::dtype::of<double>();
    case DType::Int8: return py::dtype::of<int8_t>();
    case DType::Int16: return py::dtype::of<int16_t>();
    case DType::Int32: return py::dtype::of<int32_t>();
    case DType::Int64: return py::dtype::of<int64_t>();
    case DType::UInt8: return py::dtype::of<uint8_t>();
    case DType::Bool: return py::dtype::of<bool>();
    default: throw LatheError("output dtype " + std::string(dtype_name(d)) + " has no numpy equivalent; pass torch tensors to get torch outputs");
  }
}

struct DlpackOwner {
  std::shared_ptr<Storage> storage;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  DLManagedTensor managed{};
};

py::object to_torch(const Tensor& t) {
  auto dl = to_dl(t.dtype);
  if (!dl) throw LatheError("output dtype " + std::string(dtype_name(t.dtype)) + " cannot be returned as a torch tensor");
  auto* owner = new DlpackOwner{t.storage, t.sizes, t.strides, {}};
  DLTensor& d = owner->managed.dl_tensor;
  d.data = const_cast<std::byte*>(t.storage->data());
  d.device = DLDevice{1, 0};
  d.ndim = static_cast<int32_t>(t.sizes.size());
  d.dtype = *dl;
  d.shape = owner->shape.data();
  d.strides = owner->strides.data();
  d.byte_offset = static_cast<uint64_t>(t.storage_offset) * dtype_size(t.dtype);
  owner->managed.manager_ctx = owner;
  owner->managed.deleter = [](DLManagedTensor* m) { delete static_cast<DlpackOwner*>(m->manager_ctx); };
  py::capsule capsule(&owner->managed, "dltensor", [](PyObject* cap) {
    // Still named "dltensor": nobody consumed it, so it is ours to free.
    if (PyCapsule_IsValid(cap, "dltensor")) {
      auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap, "dltensor"));
      m->deleter(m);
    }
  });
  // Leaked on purpose: a static py::object would be released after the
  // interpreter is gone.
  static py::object* from_dlpack = new py::object(py::module_::import("torch").attr("from_dlpack"));
  return (*from_dlpack)(capsule);
}

py::object to_numpy(const Tensor& t) {
  py::dtype dt = numpy_dtype(t.dtype);
  const auto item = static_cast<py::ssize_t>(dtype_size(t.dtype));
  std::vector<py::ssize_t> shape(t.sizes.begin(), t.sizes.end());
  std::vector<py::ssize_t> strides;
  for (int64_t s : t.strides) strides.push_back(s * item);
  auto* holder = new std::shared_ptr<Storage>(t.storage);
  py::capsule base(holder, [](void* p) { delete static_cast<std::shared_ptr<Storage>*>(p); });
  py::array a(dt, shape, strides, t.storage->data() + t.storage_offset * item, base);
  // Views of the archive's weights or of the caller's inputs stay read-only.
  if (t.storage->is_view()) py::detail::array_proxy(a.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  return a;
}

}  // namespace

EValue to_evalue(const py::handle& value, size_t index, bool& saw_torch) {
  if (py::isinstance<py::array>(value)) return from_array(py::reinterpret_borrow<py::array>(value), index);
  if (py::isinstance<py::bool_>(value)) return value.cast<bool>();
  if (py::isinstance<py::int_>(value)) {
    // Python ints are unbounded; Lathe's are int64 (2**100 is an error, not a cast failure).
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
    if (overflow != 0) throw LatheError(where(index) + ": " + py::repr(value).cast<std::string>() + " does not fit in an int64");
    return static_cast<int64_t>(v);
  }
  if (py::isinstance<py::float_>(value)) return value.cast<double>();
  if (py::hasattr(value, "__dlpack__")) {
    saw_torch = true;
    return from_dlpack(value, index);
  }
  throw LatheError(where(index) + ": expected a numpy array, a torch tensor or a number, got " +
                   py::str(py::type::of(value).attr("__name__")).cast<std::string>());
}

py::object to_python(const EValue& value, bool as_torch) {
  if (value.is_tensor()) return as_torch ? to_torch(value.tensor()) : to_numpy(value.tensor());
  if (value.is_int()) return py::int_(value.to_int());
  if (value.is_double()) return py::float_(value.to_double());
  if (value.is_bool()) return py::bool_(value.to_bool());
  return py::none();
}

}  // namespace lathe::python
