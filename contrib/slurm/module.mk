# The Slurm scripts (docs/slurm.md) go where the docs say: $(PREFIX)/lib/nettune/, the two
# programs executable, the library they source beside them.
SLURM_CONTRIB := contrib/slurm/nettune-prolog.sh contrib/slurm/nettune-healthcheck.sh
INSTALL_TARGETS += install-slurm-contrib
.PHONY: install-slurm-contrib
install-slurm-contrib:
	install -d $(DESTDIR)$(PREFIX)/lib/nettune
	install -m 755 $(SLURM_CONTRIB) $(DESTDIR)$(PREFIX)/lib/nettune/
	install -m 644 contrib/slurm/nettune-slurm-lib.sh $(DESTDIR)$(PREFIX)/lib/nettune/
