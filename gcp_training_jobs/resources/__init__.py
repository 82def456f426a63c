"""The Pulumi side: stack settings, the components (buckets, services, TPU grant, trainer packages, the
stack) and the TrainingJob dynamic resource and provider. Imports jobspec and backends, never the CLI."""
