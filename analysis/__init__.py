"""Analysis scripts and the shared matplotlib style (soe.mplstyle) of soe_sim."""
