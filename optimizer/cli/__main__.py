from optimizer.cli import main

main()
