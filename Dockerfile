# questbot's image: one image, two processes (the Procfile's), chosen by the command:
#
#   docker run … questbot serve     # web:    python -m bot serve   (PORT, default 8080)
#   docker run … questbot worker    # worker: python -m bot worker  (/metrics, /healthz on 9100)
#
# compose.yaml runs both beside Redis; docs/deploy.md says how, and what the worker's container
# must be allowed for bubblewrap to confine repository code inside it.
#
# The base is Debian's slim image pinned by date tag and digest, and everything in it comes from
# Debian's packages (Python too: python3 from bookworm, not a Python built into /usr/local), so
# the test suite can build the same image from Debian's packages where no image registry is
# reachable (tests/deploy/test_image.py passes BASE_IMAGE). To move to a newer base, change
# the tag and put the digest of `docker buildx imagetools inspect debian:<tag>` beside it.
ARG BASE_IMAGE=debian:bookworm-20250520-slim@sha256:90522eeb7e5923ee2b871c639059537b30521272f10ca86fdbbbb2b75a8c40cd
FROM ${BASE_IMAGE}

# What questbot runs besides Python (scripts/setup installs the same for the tests; a test holds
# the two lists together): git 2.31+ for checkouts and pushes, bubblewrap and util-linux's
# prlimit for the sandbox every proof, check and agent runs in. tini is PID 1: it forwards
# SIGTERM to questbot and reaps the processes git and bubblewrap leave behind.
# python-is-python3: a repository's check that says `python` (most do) finds Debian's python3
# inside the sandbox, which sees /usr and not questbot's virtual environment.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      python3 python3-venv python-is-python3 ca-certificates tini \
      git bubblewrap util-linux \
 && apt-get clean && rm -rf /var/lib/apt/lists/*

# questbot from this repository (not editable, without its test stack), in a virtual
# environment of its own that root owns and the service user only reads.
COPY pyproject.toml README.md LICENSE /src/
COPY bot /src/bot
RUN python3 -m venv /opt/questbot \
 && /opt/questbot/bin/pip install --no-cache-dir --disable-pip-version-check /src \
 && rm -rf /src
COPY deploy/healthcheck.py /usr/local/bin/questbot-healthcheck
RUN chmod 0755 /usr/local/bin/questbot-healthcheck

# The service user: not root, so RLIMIT_NPROC bounds each sandboxed command's processes
# (bot/agent/sandbox/processes.py), and a fixed uid, so a key file can be given to it
# (docs/deploy.md: chown 10001 the App's key).
RUN useradd --system --uid 10001 --user-group --home-dir /home/questbot --create-home \
      --shell /usr/sbin/nologin questbot
USER 10001:10001
WORKDIR /home/questbot
ENV PATH=/opt/questbot/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1

EXPOSE 8080 9100
# Each process's /healthz: the web process's on PORT, the worker's on QUESTBOT_METRICS_PORT;
# which one is read from the command PID 1 runs (deploy/healthcheck.py).
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["questbot-healthcheck"]
ENTRYPOINT ["tini", "--", "python", "-m", "bot"]
CMD ["serve"]
