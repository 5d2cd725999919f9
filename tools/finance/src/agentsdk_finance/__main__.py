"""``python -m agentsdk_finance``: fetch the sample data into the user cache."""

from agentsdk_finance.sampledata import main

main()
