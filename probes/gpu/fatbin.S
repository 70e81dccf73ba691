/* The kernels' fatbin (build/obj/probes/gpu/kernels.fatbin, made by nvcc) in .rodata. */
    .section .rodata
    .balign 64
    .global nt_gpu_fatbin
    .global nt_gpu_fatbin_size
nt_gpu_fatbin:
    .incbin NT_FATBIN_PATH
    .byte 0
    .balign 8
nt_gpu_fatbin_size:
    .quad nt_gpu_fatbin_size - nt_gpu_fatbin - 1
    .section .note.GNU-stack,"",@progbits
