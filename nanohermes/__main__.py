from nanohermes.cli import main

main()
