// Rank-one fold of an attention bias into keys, fp64: out[j, c] = ck[j, c] + beta[j] * u[c].
// CPU twin: org.mechspec.foldbias.CpuRankOneFold. One rounded multiply, one rounded add (no FMA contraction),
// so the kernel matches the twin bit for bit. Layouts row-major: ck and out [t, d], beta [t], u [d].

extern "C" __global__ void fold_rank_one_f64(const double* ck, const double* beta, const double* u, double* out,
                                             int t, int d) {
    long i = (long) blockIdx.x * blockDim.x + threadIdx.x;
    if (i < (long) t * d) {
        int j = (int) (i / d);
        int c = (int) (i % d);
        out[i] = __dadd_rn(ck[i], __dmul_rn(beta[j], u[c]));
    }
}
