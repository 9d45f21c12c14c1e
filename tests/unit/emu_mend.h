/*
 * The CUDA backward's non-finite mend (src/cuda/backward_fixup.cuh) on the CTA emulator, as
 * backward.cu runs it around every path: emu_scan before the path's kernels, emu_mend after, the
 * state over host memory as the plan lays it out in the workspace.  Included after cta_emu.h.
 */
#ifndef FLASHC_TESTS_UNIT_EMU_MEND_H
#define FLASHC_TESTS_UNIT_EMU_MEND_H

#include <algorithm>
#include <vector>

#include "cuda/backward_fixup.cuh"
extern "C" {
#include "common/check.h"
}

struct EmuMend {
    std::vector<unsigned char> bad; /* the query rows' bytes, then the key rows' */
    std::vector<int64_t> krow0;
    unsigned flag = 0x55u; /* cleared by emu_scan, as the run clears it */
    fc_cuda::BwdMend M = {};
    int64_t n_kv;
    bool dq; /* the path's dQ partials take every key of a tile (fused, sm_90a): dQ mended too */
    /* kvi: the run's kv tiles of kv_tile rows; L: its launch facts (rows) */
    EmuMend(const fc_problem &p, const fc_cuda::BwdLaunch &L, const int2 *kvi, int64_t n_kvi, int kv_tile, bool mend_dq)
        : n_kv(n_kvi), dq(mend_dq)
    {
        krow0.assign((size_t)p.B + 1, 0);
        for (int64_t b = 0; b < p.B; b++)
            krow0[(size_t)b + 1] = krow0[(size_t)b] + p.batch[b].kv_rows;
        bad.assign((size_t)(p.Nq * L.rows + p.Nkv * krow0[(size_t)p.B] + 1), 0xEEu); /* every byte the scan must write */
        M.flag = &flag, M.q_bad = bad.data(), M.k_bad = bad.data() + p.Nq * L.rows;
        M.krow0 = krow0.data(), M.krows = krow0[(size_t)p.B], M.kv_tile = kv_tile, M.kv_items = kvi;
    }
};

/* kernel(p, L, m.M) over n CTAs in launch order, or the reverse. */
template <class K> inline void emu_mend_grid(const fc_problem &p, const fc_cuda::BwdLaunch &L, const EmuMend &m, int64_t n, bool rev, K kernel)
{
    for (int64_t x = 0; x < n; x++)
        cta_emu::run_cta(fc_cuda::kThreads, cta_emu_dim3{(unsigned)(rev ? n - 1 - x : x), 0, 0}, [&] { kernel(p, L, m.M); });
}

/* backward.cu fc_bwd_mend_scan (L.items: the query tiles). */
inline void emu_scan(const fc_problem &p, const fc_cuda::BwdLaunch &L, EmuMend &m, bool rev)
{
    m.flag = 0;
    emu_mend_grid(p, L, m, (int64_t)L.n_items * p.Nq, rev, fc_cuda::bwd_nf_scan_q_kernel);
    emu_mend_grid(p, L, m, m.n_kv * p.Nkv, rev, fc_cuda::bwd_nf_scan_k_kernel);
    TC_CHECK(std::find(m.bad.begin(), m.bad.end() - 1, 0xEEu) == m.bad.end() - 1, "the scan wrote every row's byte");
}

/* backward.cu fc_bwd_mend (L.items: the query tiles). */
inline void emu_mend(const fc_problem &p, const fc_cuda::BwdLaunch &L, EmuMend &m, bool rev)
{
    emu_mend_grid(p, L, m, m.n_kv * p.Nkv, rev, fc_cuda::bwd_nf_dkv_kernel);
    if (m.dq)
        emu_mend_grid(p, L, m, (int64_t)L.n_items * p.Nq, rev, fc_cuda::bwd_nf_dq_kernel);
}

#endif /* FLASHC_TESTS_UNIT_EMU_MEND_H */
