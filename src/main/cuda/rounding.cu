// fp16 / bf16 round-to-nearest-even from fp64. CPU twin: org.mechspec.compute.HalfFloat.
// The conversion goes straight from double (no float step, which would round twice).
#include <cuda_fp16.h>
#include <cuda_bf16.h>

extern "C" __global__ void round_half_f64(const double* x, double* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = (double) __half2float(__double2half(x[i]));
}

extern "C" __global__ void round_bf16_f64(const double* x, double* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = (double) __bfloat162float(__double2bfloat16(x[i]));
}
