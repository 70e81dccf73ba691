# TRANSITIONAL, delete with the move of the judge into probes/judge/: the judging sources still
# at the root of lib/ (the statistics of verdicts, the GPU rules, the thresholds file) build
# into libntjudge.a, which calls libntcore, libntnode and libntengine. When the judge's own
# folder lands, it defines NT_LIB_judge and NT_LDLIBS_judge and this file goes.
NT_SRCS_judge := lib/verdict.c lib/gpu_judge.c lib/thresholds.c
NT_LDLIBS_judge = -lm
$(eval $(call NT_ARCHIVE,judge))
