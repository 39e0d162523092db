from nanohermes.launch import main

main()
