from metrics_manual.cli.main import main

main()
