export const stockKey = (productId: string) => `stock:{${productId}}`;
export const stockResource = (productId: string) => `stock:${productId}`;
