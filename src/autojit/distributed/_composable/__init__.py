"""torch.distributed._composable's path, where libraries import fully_shard from."""
