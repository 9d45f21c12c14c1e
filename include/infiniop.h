/* The infiniop umbrella header: handles, tensor descriptors and the operators flashc provides. */
#ifndef __INFINIOP_API_H__
#define __INFINIOP_API_H__

#include "infiniop/handle.h"
#include "infiniop/operator_descriptor.h"
#include "infiniop/ops/flash_attention.h"
#include "infiniop/tensor_descriptor.h"

#endif /* __INFINIOP_API_H__ */
