// Stand-in for CUDA's cuda_pipeline.h when a .cu file is compiled for the CPU emulator: only the primitives
// (__pipeline_memcpy_async, __pipeline_commit, __pipeline_wait_prior); the cuda::pipeline C++ API is not modelled.
#pragma once
#include "cuda_pipeline_primitives.h"
