// The accumulator operands of a wgmma instruction of width N (16, 32, 64, 96, 128 or 256), for inline asm
// whose first N/2 operands are the fp32 accumulators d[0 .. N/2 - 1]: KF_REGS_N<N> their names in
// the instruction ("%0, ..., %(N/2 - 1)"), KF_ACC_N<N> the operand list. Built from runs of 16.
#ifndef KF_WGMMA_LISTS
#define KF_WGMMA_LISTS
#define KF_R0 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15"
#define KF_R16 ", %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define KF_R32 ", %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47"
#define KF_R48 ", %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define KF_R64 ", %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79"
#define KF_R80 ", %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95"
#define KF_R96 ", %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111"
#define KF_R112 ", %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
#define KF_D4(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3])
#define KF_D16(i) KF_D4(i), KF_D4(i + 4), KF_D4(i + 8), KF_D4(i + 12)

#define KF_REGS_N16 "%0, %1, %2, %3, %4, %5, %6, %7"
#define KF_REGS_N32 KF_R0
#define KF_REGS_N64 KF_R0 KF_R16
#define KF_REGS_N96 KF_REGS_N64 KF_R32
#define KF_REGS_N128 KF_REGS_N96 KF_R48
#define KF_REGS_N256 KF_REGS_N128 KF_R64 KF_R80 KF_R96 KF_R112
#define KF_ACC_N16 KF_D4(0), KF_D4(4)
#define KF_ACC_N32 KF_D16(0)
#define KF_ACC_N64 KF_D16(0), KF_D16(16)
#define KF_ACC_N96 KF_ACC_N64, KF_D16(32)
#define KF_ACC_N128 KF_ACC_N96, KF_D16(48)
#define KF_ACC_N256 KF_ACC_N128, KF_D16(64), KF_D16(80), KF_D16(96), KF_D16(112)
#endif
