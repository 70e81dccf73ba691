#include "nccl_shim.h"
