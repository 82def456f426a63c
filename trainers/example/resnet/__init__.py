"""Stand-in for the seed's ResNet-50 sample (tpu-r1.12/models/official/resnet), so the dev stack can run
the seed's job (`pythonModule: resnet.resnet_main`) verbatim from this repository's example trainer."""
