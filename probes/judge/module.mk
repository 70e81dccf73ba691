# The judge (probes/judge/README.md): libntjudge, the statistics, the rules and the glue that
# turn a measured report into verdicts. No MPI: nettune-probe, nettune report and the unit, GPU
# and scale tests link it the same way, above the engine, node and core archives it calls.
NT_SRCS_judge := probes/judge/verdict.c probes/judge/gpu_rules.c probes/judge/expect.c \
                 probes/judge/index.c probes/judge/links.c probes/judge/retest.c probes/judge/nodes.c \
                 probes/judge/gpu.c probes/judge/codes.c probes/judge/fields.c probes/judge/judge.c \
                 probes/judge/fabric.c probes/judge/fabric_doc.c
NT_LDLIBS_judge = -lm
$(eval $(call NT_ARCHIVE,judge))

$(OBJ)/probes/judge/%.o: probes/judge/%.c
	@mkdir -p $(dir $@)
	$(CC) $(NT_CFLAGS) -Iprobes -c $< -o $@
