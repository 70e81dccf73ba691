# The judge (probes/judge/README.md): libntjudge, the statistics, the rules and the glue that
# turn a measured report into verdicts. No MPI: nettune-probe and the unit, GPU and scale tests
# link it the same way, before libnettune.
JUDGE_SRCS := probes/judge/verdict.c probes/judge/gpu_rules.c probes/judge/expect.c \
              probes/judge/index.c probes/judge/links.c probes/judge/retest.c probes/judge/nodes.c \
              probes/judge/gpu.c probes/judge/codes.c probes/judge/judge.c
JUDGE_LIB := $(LIBDIR)/libntjudge.a
ALL_TARGETS += $(JUDGE_LIB)

$(OBJ)/probes/judge/%.o: probes/judge/%.c
	@mkdir -p $(dir $@)
	$(CC) $(NT_CFLAGS) -Iprobes -c $< -o $@

$(JUDGE_LIB): $(patsubst %.c,$(OBJ)/%.o,$(JUDGE_SRCS))
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^
