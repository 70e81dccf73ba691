# The Kubernetes manifests of contrib/kubernetes, checked without a cluster (docs/kubernetes.md).
TEST_TARGETS += test-kubernetes
.PHONY: test-kubernetes
test-kubernetes:
	@/usr/bin/python3 tests/kubernetes/check_manifests.py
