# nettune: the dispatcher (no library but libc; lib/core/version.o for --version).
ALL_TARGETS += $(BIN)/nettune
$(BIN)/nettune: $(OBJ)/cmd/nettune.o $(OBJ)/lib/core/version.o
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^
