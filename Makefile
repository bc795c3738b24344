# Kernel Ladder developer targets.
#
#   make ascend-env   create .venv-ascend: an isolated virtualenv with triton-ascend (it installs a package
#                     named `triton`, so it must never share an environment with upstream Triton). The IR
#                     engine (`ladder ir --target ascend`) runs its Ascend worker with that interpreter;
#                     point LADDER_ASCEND_PYTHON elsewhere to use another one.
#   make triton36-env create .venv-triton36: triton==3.6.0 (the lent GPU image's version) in its own virtualenv;
#                     a .pth file appends .venv's site-packages after its own, so torch and the project come
#                     from .venv while `import triton` finds 3.6. Used by `--triton 3.6` / LADDER_TRITON_PYTHON
#                     (validation, compile-only checks) and `ladder ir --triton-python .venv-triton36/bin/python`.

PYTHON ?= python3
ASCEND_VENV ?= .venv-ascend
TRITON_ASCEND_VERSION ?= 3.2.0

TRITON36_VENV ?= .venv-triton36
MAIN_VENV ?= .venv

.PHONY: ascend-env ascend-env-clean triton36-env triton36-pkgs triton36-env-clean

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

triton36-env: $(TRITON36_VENV)/.installed

# triton36-pkgs: the virtualenv and its triton, without .venv (scripts/setup-env.sh starts it beside .venv's install)
triton36-pkgs: $(TRITON36_VENV)/.packages

$(TRITON36_VENV)/.packages:
	$(PYTHON) -m venv $(TRITON36_VENV)
	$(TRITON36_VENV)/bin/python -m pip install --quiet "triton==3.6.0"
	touch $@

$(TRITON36_VENV)/.installed: $(TRITON36_VENV)/.packages
	main_site=$$($(MAIN_VENV)/bin/python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])") && \
	own_site=$$($(TRITON36_VENV)/bin/python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])") && \
	echo "import site; site.addsitedir('$$main_site')" > "$$own_site/zz_ladder_main_venv.pth"
	$(TRITON36_VENV)/bin/python -c "import triton, torch; assert triton.__version__.startswith('3.6'), triton.__file__; \
	print('triton', triton.__version__, '+ torch', torch.__version__, 'ready in $(TRITON36_VENV)')"
	touch $@

triton36-env-clean:
	rm -rf $(TRITON36_VENV)
