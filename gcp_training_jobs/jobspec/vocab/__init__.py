"""Stage 4, model: the three job vocabularies, shape and types only (values are judged by `rules`).

`training_input` is AI Platform Training's ml v1 Job (`trainingInput`, a gcloud config.yaml), `custom_job` Vertex AI's
CustomJobSpec and `tuning` its HyperparameterTuningJob config, as `gcloud ai ... --config` reads them."""
