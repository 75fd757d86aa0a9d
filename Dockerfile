# The in-cluster recorder's image: `kubectl spark recorder` deploys it running
# `kubectl-spark record --in-cluster --leader-elect -A …` (docs/recorder.md).
#   docker build -t <registry>/kubectl-spark-recorder:<version> .
#   kubectl spark recorder -n kubectl-spark --image <registry>/kubectl-spark-recorder:<version> --yes
FROM python:3.11-slim
WORKDIR /src
COPY pyproject.toml README.md ./
COPY kubectl_spark ./kubectl_spark
COPY tui ./tui
RUN pip install --no-cache-dir . && rm -rf /src
# The manifests run it as this user, read-only root, the store on its claim.
USER 65532:65532
WORKDIR /var/lib/kubectl-spark
ENTRYPOINT ["kubectl-spark"]
CMD ["record", "--in-cluster", "--leader-elect", "--all-namespaces"]
