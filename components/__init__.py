"""GPU and TPU training jobs on Google Cloud as Pulumi resources.

Importing this package is cheap: pulumi, pulumi_gcp and googleapiclient are imported only by
the modules that need them, so `validate` and `render` start fast.
"""
