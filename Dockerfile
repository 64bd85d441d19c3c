# Icebatch image. It runs the same setup script as a developer machine and CI, so the three
# cannot drift apart. Embedded mode by default; set ICEBATCH_DATABASE_URL, ICEBATCH_BROKER_URL,
# ICEBATCH_WAREHOUSE and ICEBATCH_SPARK_MASTER for production, and run `icebatch api` and
# `icebatch worker` as separate containers.
FROM python:3.11-slim-bookworm

RUN apt-get update -qq \
    && apt-get install -y -qq --no-install-recommends openjdk-17-jre-headless procps \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /opt/icebatch
COPY . .
RUN ICEBATCH_SETUP_BROWSER=0 bash scripts/setup.sh && rm -rf /root/.cache/pip

ENV PATH="/opt/icebatch/.venv/bin:${PATH}" \
    ICEBATCH_HOME=/var/lib/icebatch
VOLUME /var/lib/icebatch
EXPOSE 8000
CMD ["icebatch", "up", "--host", "0.0.0.0", "--port", "8000"]
