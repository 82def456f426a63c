"""What a TrainingJob is, without Pulumi: its inputs and outputs declared once (`declared`), read once (`inputs`), the
labels it is found by (`identity`), what a change of its inputs does to its runs (`runs`) and whether it is protected
(`protection`). The provider (resources/training_job/), the command line (`status`, `logs`, `spend`, `diff`) and the
policy pack read these; importing them loads no Pulumi."""
