// The product image upload is `multipart/form-data` with one file part `image`; the generated type
// of that part is a string (OpenAPI `format: binary`), so a typed call needs the file to travel
// through a body serializer. Spread the result into the call:
//   client.POST('/dpy/payment-link/v1/payment-links/products/images', productImageUpload(file, 'photo.png'))
import type { components } from '@payment-platform/contract/types';

export function productImageUpload(image: Blob, fileName = 'image'): {
  body: components['schemas']['ProductImageUpload'];
  bodySerializer: () => FormData;
} {
  return {
    body: { image: fileName },
    bodySerializer: () => {
      const form = new FormData();
      form.set('image', image, fileName);
      return form;
    },
  };
}
