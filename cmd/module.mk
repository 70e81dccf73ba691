# nettune: the dispatcher (no library but libc).
ALL_TARGETS += $(BIN)/nettune
$(BIN)/nettune: $(OBJ)/cmd/nettune.o
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^
