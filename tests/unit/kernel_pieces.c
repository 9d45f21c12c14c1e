/* unit_main: the per-set tables this build compiled (UNIT_HAVE_<isa> from tests/unit/CMakeLists.txt). */
#include "kernel_pieces.h"

#include <stdio.h>
#include <string.h>

#include "common/check.h"
#include "cpu/cpu.h"

extern const unit_pieces unit_pieces_scalar;
#if defined(UNIT_HAVE_vec16)
extern const unit_pieces unit_pieces_vec16;
#endif
#if defined(UNIT_HAVE_avx2)
extern const unit_pieces unit_pieces_avx2;
#endif
#if defined(UNIT_HAVE_avx512)
extern const unit_pieces unit_pieces_avx512;
#endif
#if defined(UNIT_HAVE_avx512bf16)
extern const unit_pieces unit_pieces_avx512bf16;
#endif
#if defined(UNIT_HAVE_amx)
extern const unit_pieces unit_pieces_amx;
#endif
#if defined(UNIT_HAVE_neon)
extern const unit_pieces unit_pieces_neon;
#endif
#if defined(UNIT_HAVE_neonbf16)
extern const unit_pieces unit_pieces_neonbf16;
#endif

static const unit_pieces *pieces_of(const char *isa)
{
    const unit_pieces *all[] = {
        &unit_pieces_scalar,
#if defined(UNIT_HAVE_vec16)
        &unit_pieces_vec16,
#endif
#if defined(UNIT_HAVE_avx2)
        &unit_pieces_avx2,
#endif
#if defined(UNIT_HAVE_avx512)
        &unit_pieces_avx512,
#endif
#if defined(UNIT_HAVE_avx512bf16)
        &unit_pieces_avx512bf16,
#endif
#if defined(UNIT_HAVE_amx)
        &unit_pieces_amx,
#endif
#if defined(UNIT_HAVE_neon)
        &unit_pieces_neon,
#endif
#if defined(UNIT_HAVE_neonbf16)
        &unit_pieces_neonbf16,
#endif
    };
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        if (strcmp(all[k]->isa, isa) == 0)
            return all[k];
    return NULL;
}

int unit_main(int argc, char **argv, const char *piece, void (*body)(const unit_pieces *))
{
    const char *isa = argc > 1 ? argv[1] : "scalar";
    const unit_pieces *p = pieces_of(isa);
    if (!p || !fc_cpu_pin_isa(isa)) {
        printf("%s: kernel set %s is not in this build or not run by this CPU: skipped\n", argv[0], isa);
        return TC_SKIP;
    }
    body(p);
    char name[64];
    snprintf(name, sizeof name, "unit_%s[%s]", piece, isa);
    return tc_summary(name);
}
