# nettune: the dispatcher (no library but libc; lib/version.o for --version).
ALL_TARGETS += $(BIN)/nettune
$(BIN)/nettune: $(OBJ)/cmd/nettune.o $(OBJ)/lib/version.o
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^
