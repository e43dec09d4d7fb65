/* Register-blocked float32 cosines for the BERTScore greedy matcher (see _greedy.pyx).
 *
 * S[i * nrp + j] = <Hp[i, :], Rt[:, j]> for a padded candidate block Hp (nhp x d, row-major,
 * nhp % 4 == 0) and a transposed, padded reference Rt (d x nrp, nrp % 8 == 0).
 * Each column keeps its own sequential float32 sum over blocks of 64 coordinates (products and
 * sums stay separate operations: the build uses -ffp-contract=off), the block sums are added in
 * float64 and each cosine is rounded once to float32. Vectorised across 8 columns with GCC/Clang
 * vector extensions (4-float vectors: SSE2 on x86-64, NEON on arm64), so the numbers are the same
 * on every instruction set. A plain C loop serves other compilers.
 */
#ifndef MTSCORE_GREEDY_COSINES_H
#define MTSCORE_GREEDY_COSINES_H
#include <stddef.h>
#include <string.h>

#define MTS_KB 64

#if defined(__GNUC__) || defined(__clang__)
typedef float mts_v4sf __attribute__((vector_size(16)));

static inline mts_v4sf mts_load4(const float *p) { mts_v4sf v; memcpy(&v, p, sizeof v); return v; }
static inline mts_v4sf mts_splat(float a) { mts_v4sf v = {a, a, a, a}; return v; }

static void mts_greedy_cosines(const float *Hp, ptrdiff_t nhp, const float *Rt, ptrdiff_t nrp,
                               ptrdiff_t d, float *S)
{
    for (ptrdiff_t i0 = 0; i0 < nhp; i0 += 4) {
        for (ptrdiff_t j0 = 0; j0 < nrp; j0 += 8) {
            double tot[4][8];
            memset(tot, 0, sizeof tot);
            for (ptrdiff_t k0 = 0; k0 < d; k0 += MTS_KB) {
                ptrdiff_t kend = k0 + MTS_KB < d ? k0 + MTS_KB : d;
                mts_v4sf c00 = mts_splat(0.f), c01 = c00, c10 = c00, c11 = c00;
                mts_v4sf c20 = c00, c21 = c00, c30 = c00, c31 = c00;
                const float *h0 = Hp + i0 * d, *h1 = h0 + d, *h2 = h1 + d, *h3 = h2 + d;
                for (ptrdiff_t k = k0; k < kend; k++) {
                    const float *rk = Rt + k * nrp + j0;
                    mts_v4sf r0 = mts_load4(rk), r1 = mts_load4(rk + 4);
                    mts_v4sf a;
                    a = mts_splat(h0[k]); c00 += a * r0; c01 += a * r1;
                    a = mts_splat(h1[k]); c10 += a * r0; c11 += a * r1;
                    a = mts_splat(h2[k]); c20 += a * r0; c21 += a * r1;
                    a = mts_splat(h3[k]); c30 += a * r0; c31 += a * r1;
                }
                for (int jj = 0; jj < 4; jj++) {
                    tot[0][jj] += c00[jj]; tot[0][jj + 4] += c01[jj];
                    tot[1][jj] += c10[jj]; tot[1][jj + 4] += c11[jj];
                    tot[2][jj] += c20[jj]; tot[2][jj + 4] += c21[jj];
                    tot[3][jj] += c30[jj]; tot[3][jj + 4] += c31[jj];
                }
            }
            for (int ii = 0; ii < 4; ii++)
                for (int jj = 0; jj < 8; jj++)
                    S[(i0 + ii) * nrp + j0 + jj] = (float)tot[ii][jj];
        }
    }
}
#else
static void mts_greedy_cosines(const float *Hp, ptrdiff_t nhp, const float *Rt, ptrdiff_t nrp,
                               ptrdiff_t d, float *S)
{
    for (ptrdiff_t i = 0; i < nhp; i++)
        for (ptrdiff_t j = 0; j < nrp; j++) {
            double tot = 0.0;
            for (ptrdiff_t k0 = 0; k0 < d; k0 += MTS_KB) {
                ptrdiff_t kend = k0 + MTS_KB < d ? k0 + MTS_KB : d;
                float acc = 0.f;
                for (ptrdiff_t k = k0; k < kend; k++)
                    acc += Hp[i * d + k] * Rt[k * nrp + j];
                tot += acc;
            }
            S[i * nrp + j] = (float)tot;
        }
}
#endif
#endif
