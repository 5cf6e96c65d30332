"""The S3 integration suite: every quarantine write and read goes over HTTP to a real S3 server.

The server is the one `AWS_ENDPOINT_URL` names (MinIO from `docker-compose.yml`, or any other
S3), or else a moto server this package starts on 127.0.0.1 for its own tests.
"""
