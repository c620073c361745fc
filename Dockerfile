# One image for every role (certs, party daemon, coordinator); docker-compose.yml picks the command.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

COPY . /tmp/pprl
RUN pip install "/tmp/pprl[plots]" && rm -rf /tmp/pprl

# Every service runs as this one fixed uid, so the 0600 keys the certs service writes stay
# readable by the daemons. The mount points belong to it because Docker seeds a new, empty named
# volume with the owner and mode of the image directory it is mounted on.
RUN useradd --system --uid 10001 --user-group --no-create-home --shell /usr/sbin/nologin pprl \
    && mkdir /certs /records /state /out \
    && chown pprl:pprl /certs /records /state /out
USER 10001:10001

# A party daemon (the services that mount /config/party.toml) is healthy while the standard
# gRPC health check answers SERVING over mutual TLS with its own certificate; the image's
# other roles (certs, coordinator) have nothing to check.
HEALTHCHECK --interval=10s --timeout=10s --start-period=120s --retries=3 \
    CMD [ ! -f /config/party.toml ] || pprl party health --config /config/party.toml

ENTRYPOINT ["pprl"]
CMD ["--help"]
