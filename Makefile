# Kernel Ladder developer targets.
#
#   make ascend-env   create .venv-ascend: an isolated virtualenv with triton-ascend (it installs a package
#                     named `triton`, so it must never share an environment with upstream Triton). The IR
#                     engine (`ladder ir --target ascend`) runs its Ascend worker with that interpreter;
#                     point LADDER_ASCEND_PYTHON elsewhere to use another one.

PYTHON ?= python3
ASCEND_VENV ?= .venv-ascend
TRITON_ASCEND_VERSION ?= 3.2.0

.PHONY: ascend-env ascend-env-clean

ascend-env: $(ASCEND_VENV)/.installed

$(ASCEND_VENV)/.installed:
	$(PYTHON) -m venv $(ASCEND_VENV)
	$(ASCEND_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(ASCEND_VENV)/bin/python -m pip install --quiet "triton-ascend==$(TRITON_ASCEND_VERSION)" pybind11
	$(ASCEND_VENV)/bin/python -c "import triton; from triton.backends.compiler import GPUTarget; \
	from triton.compiler.compiler import make_backend; make_backend(GPUTarget('npu', 'Ascend910B3', 0)); \
	print('triton-ascend', triton.__version__, 'ready in $(ASCEND_VENV)')"
	touch $@

ascend-env-clean:
	rm -rf $(ASCEND_VENV)
