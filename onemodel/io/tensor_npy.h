// Tensors to and from NumPy .npy files, for every dtype (f32 f16 i64 i32 i8 u8 bool), on top of
// onemodel/io/npy.h. save_npy writes the tensor's logical elements (any strides) in C order;
// load_npy creates a contiguous tensor in the current store. Errors name the file and the fix.
#pragma once
#include <string>

#include "onemodel/core/status.h"
#include "onemodel/core/tensor.h"

namespace om {

void save_npy(const std::string& path, const Tensor& tensor);
Tensor load_npy(const std::string& path);

// Status-returning forms for builds without exceptions.
Status try_save_npy(const std::string& path, const Tensor& tensor);
Status try_load_npy(const std::string& path, Tensor* out);

}  // namespace om
