"""The pure job-spec domain: catalog, models of the job vocabularies, rules, problems, documents and the
rendering of request bodies. Imports pydantic and yaml only: never pulumi, pulumi_gcp or googleapiclient."""
