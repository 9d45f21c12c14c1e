/*
 * aclnn objects (semantics §6.4): creation rules, getters (new malloc'ed arrays), the registry of
 * live handles (double, foreign and cross-kind destroys give 161002 and touch nothing), tensor lists
 * that own their tensors, aclnnInit/aclnnFinalize.
 */
#include <stdlib.h>
#include <string.h>

#include "aclnn/aclnn_base.h"
#include "acl/acl.h"
#include "common/check.h"

#define INVALID ACLNN_ERR_PARAM_INVALID
#define NULLPTR ACLNN_ERR_PARAM_NULLPTR

static bool msg_has(const char *needle)
{
    const char *m = aclGetRecentErrMsg();
    return m && strstr(m, needle);
}

static void tensors(void)
{
    tc_context("aclCreateTensor");
    const int64_t dims[3] = {2, 3, 4}, strides[3] = {1, 2, 6}, storage[1] = {24}, neg[3] = {2, -3, 4};
    char data[96];
    aclTensor *t = aclCreateTensor(dims, 3, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, NULL, 0, data);
    TC_CHECK(t != NULL, "plain tensor");
    int64_t *got = NULL;
    uint64_t n = 0;
    TC_CHECK(aclGetViewStrides(t, &got, &n) == ACLNN_SUCCESS && n == 3 && got[0] == 12 && got[1] == 4 && got[2] == 1,
             "NULL strides mean contiguous row-major");
    free(got);
    TC_CHECK(aclGetViewShape(t, &got, &n) == ACLNN_SUCCESS && n == 3 && got[0] == 2 && got[2] == 4, "view shape");
    free(got);
    TC_CHECK(aclGetStorageShape(t, &got, &n) == ACLNN_SUCCESS && n == 0 && got != NULL, "no storage shape");
    free(got);
    aclTensor *s = aclCreateTensor(dims, 3, ACL_BF16, strides, 5, ACL_FORMAT_NCL, storage, 1, data);
    int64_t off = -1;
    aclFormat fmt;
    aclDataType dt;
    void *addr = NULL;
    TC_CHECK(aclGetViewStrides(s, &got, &n) == ACLNN_SUCCESS && got[0] == 1 && got[1] == 2 && got[2] == 6, "strides copied");
    free(got);
    TC_CHECK(aclGetStorageShape(s, &got, &n) == ACLNN_SUCCESS && n == 1 && got[0] == 24, "storage copied");
    free(got);
    TC_CHECK(aclGetViewOffset(s, &off) == ACLNN_SUCCESS && off == 5, "offset (5th argument)");
    TC_CHECK(aclGetFormat(s, &fmt) == ACLNN_SUCCESS && fmt == ACL_FORMAT_NCL, "format (6th argument)");
    TC_CHECK(aclGetDataType(s, &dt) == ACLNN_SUCCESS && dt == ACL_BF16, "dtype");
    TC_CHECK(aclGetRawTensorAddr(s, &addr) == ACLNN_SUCCESS && addr == data, "address");
    TC_CHECK(aclSetRawTensorAddr(s, data + 8) == ACLNN_SUCCESS && aclGetRawTensorAddr(s, &addr) == ACLNN_SUCCESS &&
                 addr == data + 8, "rebinding");
    aclTensor *odd = aclCreateTensor(dims, 3, ACL_STRING, NULL, 0, ACL_FRACTAL_Z_3D, NULL, 0, NULL);
    TC_CHECK(odd != NULL, "dtype and format are stored as given (operators check them)");
    aclTensor *scalar = aclCreateTensor(NULL, 0, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, NULL, 0, data);
    TC_CHECK(scalar != NULL, "a rank-0 tensor");
    TC_CHECK(aclGetViewShape(scalar, &got, &n) == ACLNN_SUCCESS && n == 0 && got != NULL, "rank-0 shape");
    free(got);
    const int64_t nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    aclGetRecentErrMsg();
    TC_CHECK(aclCreateTensor(nine, 9, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, NULL, 0, data) == NULL && msg_has("viewDimsNum"),
             "more than 8 dims");
    TC_CHECK(aclCreateTensor(NULL, 2, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, NULL, 0, data) == NULL && msg_has("viewDims"),
             "NULL dims");
    TC_CHECK(aclCreateTensor(neg, 3, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, NULL, 0, data) == NULL && msg_has("viewDims[1]"),
             "negative dim");
    const int64_t nst[3] = {1, -2, 6};
    TC_CHECK(aclCreateTensor(dims, 3, ACL_FLOAT, nst, 0, ACL_FORMAT_ND, NULL, 0, data) == NULL && msg_has("stride[1]"),
             "negative stride");
    TC_CHECK(aclCreateTensor(dims, 3, ACL_FLOAT, NULL, -1, ACL_FORMAT_ND, NULL, 0, data) == NULL && msg_has("offset"),
             "negative offset");
    TC_CHECK(aclCreateTensor(dims, 3, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, NULL, 1, data) == NULL && msg_has("storageDims"),
             "NULL storage dims");
    /* getters: NULL arguments first, then liveness */
    TC_CHECK(aclGetViewShape(NULL, &got, &n) == NULLPTR, "NULL tensor");
    TC_CHECK(aclGetViewShape(t, NULL, &n) == NULLPTR && msg_has("viewDims"), "NULL out array");
    TC_CHECK(aclGetViewOffset(t, NULL) == NULLPTR, "NULL offset");
    TC_CHECK(aclGetViewShape((aclTensor *)(uintptr_t)0x40, NULL, &n) == NULLPTR, "NULLs before liveness");
    TC_CHECK(aclGetDataType((aclTensor *)(uintptr_t)0x40, &dt) == INVALID, "foreign handle");
    TC_CHECK(aclDestroyTensor(t) == ACLNN_SUCCESS, "destroy");
    TC_CHECK(aclDestroyTensor(t) == INVALID && msg_has("not a live aclTensor"), "double destroy");
    TC_CHECK(aclGetFormat(t, &fmt) == INVALID, "dead handle");
    TC_CHECK(aclSetRawTensorAddr(t, data) == INVALID, "dead handle rebinding");
    TC_CHECK(aclDestroyTensor(NULL) == ACLNN_SUCCESS, "destroy NULL");
    TC_CHECK(aclDestroyTensor((aclTensor *)data) == INVALID, "destroy foreign");
    aclDestroyTensor(s), aclDestroyTensor(odd), aclDestroyTensor(scalar);
}

static void arrays(void)
{
    tc_context("arrays and scalars");
    const int64_t iv[3] = {4, -5, 6};
    const float fv[2] = {1.5f, 2.5f};
    const bool bv[2] = {true, false};
    aclIntArray *ia = aclCreateIntArray(iv, 3);
    uint64_t n = 0;
    TC_CHECK(ia && aclGetIntArraySize(ia, &n) == ACLNN_SUCCESS && n == 3, "int array");
    aclIntArray *empty = aclCreateIntArray(NULL, 0);
    TC_CHECK(empty && aclGetIntArraySize(empty, &n) == ACLNN_SUCCESS && n == 0, "empty int array");
    TC_CHECK(aclCreateIntArray(NULL, 2) == NULL && msg_has("value"), "NULL values with a size");
    aclFloatArray *fa = aclCreateFloatArray(fv, 2);
    aclBoolArray *ba = aclCreateBoolArray(bv, 2);
    TC_CHECK(fa && ba, "float and bool arrays");
    TC_CHECK(aclCreateFloatArray(NULL, 1) == NULL && aclCreateBoolArray(NULL, 1) == NULL, "NULL values");
    double dv = 3.0;
    int64_t lv = 7;
    aclScalar *sd = aclCreateScalar(&dv, ACL_DOUBLE), *sl = aclCreateScalar(&lv, ACL_INT64);
    TC_CHECK(sd && sl, "scalars");
    TC_CHECK(aclCreateScalar(&dv, ACL_STRING) == NULL, "a scalar needs an element size");
    TC_CHECK(aclCreateScalar(NULL, ACL_FLOAT) == NULL, "a scalar needs a value");
    /* cross-kind destroys are refused and leave the object alive */
    TC_CHECK(aclDestroyTensor((const aclTensor *)ia) == INVALID, "an int array is not a tensor");
    TC_CHECK(aclDestroyFloatArray((const aclFloatArray *)ia) == INVALID, "nor a float array");
    TC_CHECK(aclGetIntArraySize(ia, &n) == ACLNN_SUCCESS && n == 3, "still alive");
    TC_CHECK(aclGetIntArraySize(NULL, &n) == NULLPTR && aclGetIntArraySize(ia, NULL) == NULLPTR, "NULL arguments");
    TC_CHECK(aclDestroyIntArray(ia) == ACLNN_SUCCESS && aclDestroyIntArray(ia) == INVALID, "int array destroy twice");
    TC_CHECK(aclGetIntArraySize(ia, &n) == INVALID, "dead array");
    TC_CHECK(aclDestroyFloatArray(fa) == ACLNN_SUCCESS && aclDestroyFloatArray(fa) == INVALID, "float array");
    TC_CHECK(aclDestroyBoolArray(ba) == ACLNN_SUCCESS && aclDestroyBoolArray(ba) == INVALID, "bool array");
    TC_CHECK(aclDestroyScalar(sd) == ACLNN_SUCCESS && aclDestroyScalar(sd) == INVALID, "scalar");
    TC_CHECK(aclDestroyScalar(sl) == ACLNN_SUCCESS, "scalar");
    TC_CHECK(aclDestroyIntArray(empty) == ACLNN_SUCCESS, "empty array");
    TC_CHECK(aclDestroyIntArray(NULL) == ACLNN_SUCCESS && aclDestroyFloatArray(NULL) == ACLNN_SUCCESS &&
                 aclDestroyBoolArray(NULL) == ACLNN_SUCCESS && aclDestroyScalar(NULL) == ACLNN_SUCCESS &&
                 aclDestroyTensorList(NULL) == ACLNN_SUCCESS,
             "destroying NULL is a no-op");
}

static void lists(void)
{
    tc_context("tensor lists");
    const int64_t dims[1] = {4};
    float data[4];
    aclTensor *a = aclCreateTensor(dims, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, NULL, 0, data);
    aclTensor *b = aclCreateTensor(dims, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, NULL, 0, data);
    const aclTensor *both[2] = {a, b};
    aclTensorList *l = aclCreateTensorList(both, 2);
    uint64_t n = 0;
    TC_CHECK(l && aclGetTensorListSize(l, &n) == ACLNN_SUCCESS && n == 2, "list of two");
    /* the sample pattern: destroy the tensors, never the list; the documented one: only the list */
    TC_CHECK(aclDestroyTensor(a) == ACLNN_SUCCESS, "destroy a member");
    TC_CHECK(aclDestroyTensorList(l) == ACLNN_SUCCESS, "the list skips destroyed members");
    TC_CHECK(aclDestroyTensor(b) == INVALID, "the list destroyed its live member");
    TC_CHECK(aclDestroyTensorList(l) == INVALID, "double destroy of a list");
    /* a tensor created after a member died (possibly at the same address) is not the list's */
    aclTensor *m = aclCreateTensor(dims, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, NULL, 0, data);
    const aclTensor *one[1] = {m};
    aclTensorList *l2 = aclCreateTensorList(one, 1);
    aclDestroyTensor(m);
    aclTensor *c = aclCreateTensor(dims, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, NULL, 0, data);
    TC_CHECK(aclDestroyTensorList(l2) == ACLNN_SUCCESS, "destroy the list");
    TC_CHECK(aclDestroyTensor(c) == ACLNN_SUCCESS, "a newer tensor%s survives the list",
             c == m ? " at the dead member's address" : "");
    const aclTensor *dead[1] = {a};
    TC_CHECK(aclCreateTensorList(dead, 1) == NULL && msg_has("value[0]"), "members must be live");
    TC_CHECK(aclCreateTensorList(NULL, 1) == NULL, "NULL values");
    aclTensorList *e = aclCreateTensorList(NULL, 0);
    TC_CHECK(e && aclDestroyTensorList(e) == ACLNN_SUCCESS, "empty list");
    TC_CHECK(aclGetTensorListSize(NULL, &n) == NULLPTR && aclGetTensorListSize(e, &n) == INVALID, "size checks");
    TC_CHECK(aclnnInit(NULL) == ACLNN_SUCCESS && aclnnFinalize() == ACLNN_SUCCESS, "aclnnInit / aclnnFinalize");
}

int main(void)
{
    tensors();
    arrays();
    lists();
    return tc_summary("cann_objects");
}
