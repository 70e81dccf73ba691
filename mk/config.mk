# Detection of the optional parts. Everything here is a plain make variable so that
# `make config` can print it and module.mk files can test it with ifeq.
CUDA_HOME ?= $(firstword $(wildcard /usr/local/cuda))
NCCL_HOME ?=
MPICC     ?= mpicc
PKG_CONFIG ?= pkg-config

HAVE_CUDA := $(if $(and $(CUDA_HOME),$(wildcard $(CUDA_HOME)/include/cuda_runtime_api.h)),1,0)
NCCL_HEADER := $(firstword $(wildcard $(if $(NCCL_HOME),$(NCCL_HOME)/include/nccl.h) \
                 $(if $(CUDA_HOME),$(CUDA_HOME)/include/nccl.h) /usr/include/nccl.h))
HAVE_NCCL := $(if $(NCCL_HEADER),1,0)
HAVE_IBVERBS := $(shell $(PKG_CONFIG) --exists libibverbs 2>/dev/null && echo 1 || echo 0)
HAVE_HWLOC := $(shell $(PKG_CONFIG) --exists hwloc 2>/dev/null && echo 1 || echo 0)
HAVE_CJSON := $(shell $(PKG_CONFIG) --exists libcjson 2>/dev/null && echo 1 || echo 0)
HAVE_CMOCKA := $(shell $(PKG_CONFIG) --exists cmocka 2>/dev/null && echo 1 || echo 0)
HAVE_MPI := $(shell command -v $(MPICC) >/dev/null 2>&1 && echo 1 || echo 0)
# nettune-probe builds with MPI and rdma-core's headers (libibverbs itself is opened at run time).
HAVE_PROBE := $(if $(filter 11,$(HAVE_MPI)$(HAVE_IBVERBS)),1,0)
HAVE_CLANG := $(shell command -v clang >/dev/null 2>&1 && echo 1 || echo 0)
# The builds inside `make test` (the tree, the sanitized tree, the fuzz targets) and the fuzz
# smoke runs use every core: CI runs plain `make test`, whose sub-makes would otherwise build one
# file at a time. The suites themselves still run one after another (tests/run-suites.sh): some
# measure time. A -j given to the top make is kept as it is (its jobserver reaches the sub-makes).
NT_JOBS ?= $(shell nproc 2>/dev/null || echo 1)
NT_SUBJOBS = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(NT_JOBS))

CJSON_CFLAGS := $(shell $(PKG_CONFIG) --cflags libcjson 2>/dev/null)
CJSON_LIBS   := $(or $(shell $(PKG_CONFIG) --libs libcjson 2>/dev/null),-lcjson)
HWLOC_CFLAGS := $(shell $(PKG_CONFIG) --cflags hwloc 2>/dev/null)
HWLOC_LIBS   := $(or $(shell $(PKG_CONFIG) --libs hwloc 2>/dev/null),-lhwloc)
# rdma-core's headers only: the RDMA probe opens libibverbs at run time (probes/rdma/ibv.c).
IBV_CFLAGS   := $(shell $(PKG_CONFIG) --cflags libibverbs 2>/dev/null)
XML2_CFLAGS  := $(shell $(PKG_CONFIG) --cflags libxml-2.0 2>/dev/null)
XML2_LIBS    := $(or $(shell $(PKG_CONFIG) --libs libxml-2.0 2>/dev/null),-lxml2)
ZLIB_LIBS    := $(or $(shell $(PKG_CONFIG) --libs zlib 2>/dev/null),-lz)
CMOCKA_LIBS  := $(or $(shell $(PKG_CONFIG) --libs cmocka 2>/dev/null),-lcmocka)

NETTUNE_VERSION := $(shell git describe --always --dirty 2>/dev/null || echo 0.1.0)
