/*
 * A qemu TCG plugin that counts the guest instructions a qemu-user process retires, printed at
 * exit as "insns N" (tools/arm-insns.sh).  Each translated block adds its instruction count to one
 * counter inline when it runs, so the count is exact for a single-threaded guest (the adds are
 * not atomic: run the guest at one thread).
 *
 * Built for the host against the few calls of qemu's plugin API (version 1, qemu 4.2 and later)
 * it uses, declared here: no qemu headers needed.
 *     cc -shared -fPIC -O2 tools/qemu-insns.c -o qemu-insns.so
 *     qemu-aarch64 -plugin ./qemu-insns.so -d plugin ./program
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define EXPORT __attribute__((visibility("default")))

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
typedef struct qemu_info { /* the leading fields of qemu_info_t */
    const char *target_name;
    struct {
        int min, cur;
    } version;
} qemu_info;
enum { INLINE_ADD_U64 = 0 };

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, void (*cb)(qemu_plugin_id_t, struct qemu_plugin_tb *));
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, int op, void *ptr, uint64_t imm);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, void (*cb)(qemu_plugin_id_t, void *), void *userdata);
void qemu_plugin_outs(const char *string);

EXPORT int qemu_plugin_version = 1;

static uint64_t retired;

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    (void)id;
    qemu_plugin_register_vcpu_tb_exec_inline(tb, INLINE_ADD_U64, &retired, qemu_plugin_tb_n_insns(tb));
}

static void on_guest_exit(qemu_plugin_id_t id, void *userdata)
{
    (void)id, (void)userdata;
    char line[64];
    snprintf(line, sizeof line, "insns %" PRIu64 "\n", retired);
    qemu_plugin_outs(line);
}

EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info *info, int argc, char **argv)
{
    (void)info, (void)argc, (void)argv;
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
    qemu_plugin_register_atexit_cb(id, on_guest_exit, NULL);
    return 0;
}
