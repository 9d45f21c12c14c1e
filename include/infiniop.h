/*
 * The infiniop umbrella header: handles, tensor descriptors and the operators flashc provides
 * (semantics §7).  Calls return bare infiniStatus_t codes; the text of the latest failure in the
 * calling thread is fc_last_error(), declared in <flashc.h> (link the same library).
 */
#ifndef __INFINIOP_API_H__
#define __INFINIOP_API_H__

#include "infiniop/handle.h"
#include "infiniop/operator_descriptor.h"
#include "infiniop/ops/flash_attention.h"
#include "infiniop/tensor_descriptor.h"

#endif /* __INFINIOP_API_H__ */
