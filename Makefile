# Every target sets up what it needs: a fresh clone needs only python3 (3.11+) and make.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# What the demo needs: the runtime and the plots extra, not the development and peer tools.
DEMO_STAMP := $(VENV)/.demo-installed
# Parallel test workers: the daemon tests wait on their peers and leave the CPU idle about
# half the time, so four workers on two cores finish sooner than two. Files that share
# module-scoped fixtures build them once per worker that runs any of their tests.
TEST_WORKERS ?= 4
# One BLAS thread per worker: four workers each starting a thread per core would keep eight
# busy threads on two cores.
TEST_ENV := OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1

.PHONY: install demo test lint format proto docs clean compose-up

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,peer]'
	touch $(STAMP)

$(DEMO_STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -e '.[plots]'
	touch $(DEMO_STAMP)

# Keeps the run (both state directories, each party's result and report, summary.json) in a
# new demo-run/<start time>/ and prints where; `make clean` removes demo-run/.
demo: $(DEMO_STAMP)
	$(BIN)/pprl demo

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(TEST_ENV) $(BIN)/pytest -q -n $(TEST_WORKERS) --dist load --durations=25

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# Regenerate the gRPC code from proto/ (tests/test_generated_code.py fails when it is stale).
proto: $(STAMP)
	$(BIN)/python -m grpc_tools.protoc -I proto --python_out=. --grpc_python_out=. --pyi_out=. proto/pprl/wire/v1/linkage.proto

# Regenerate the configuration reference and the annotated example from the option table
# (pprl/party/options.py; tests/test_options.py fails when they are stale), and the module map
# of docs/architecture.md from the code (tests/test_architecture.py).
docs: $(STAMP)
	$(BIN)/python -m pprl.party.config_reference markdown > docs/configuration.md
	$(BIN)/python -m pprl.party.config_reference example > docs/party.example.toml
	$(BIN)/python -m tests.architecture_map

# The compose demo with its results on the host (docker-compose.host.yml): the bind-mounted
# directories made first, owned by the user the containers run as (never root).
COMPOSE_DIRS := compose-data/certs compose-data/out compose-data/alice/records \
	compose-data/alice/state compose-data/bob/records compose-data/bob/state
compose-up:
	mkdir -p $(COMPOSE_DIRS)
	uid=$$(id -u); gid=$$(id -g); \
	if [ "$$uid" = 0 ]; then uid=10001; gid=10001; chown -R $$uid:$$gid compose-data; fi; \
	PPRL_UID=$$uid PPRL_GID=$$gid docker compose -f docker-compose.yml -f docker-compose.host.yml up --build -d
	@echo "results: compose-data/alice/state/runs/<run id>/ and compose-data/bob/state/runs/<run id>/;" \
	  "summary: compose-data/out/summary.json (docker compose logs -f coordinator)"

clean:
	rm -rf $(VENV) demo-run .pytest_cache
